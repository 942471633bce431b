package process

import (
	"strings"
	"syscall"
	"testing"

	"github.com/hone-tune/hone"
)

// noLaunch is a Launcher that is never called: it only makes an executor
// one whose trials run elsewhere.
type noLaunch struct{}

func (noLaunch) Launch(LaunchSpec) (Launched, error) { return nil, syscall.ENOSYS }

// TestStoredCheckpointRef: behind the node agent, a trial may name as its
// checkpoint only an upload under its own trial's upload directory in the
// store (docs/CLUSTER.md, Security): not another trial's, not a
// checkpoint's place, not a path that climbs out; and a trial of an
// executor that stages locally may not name a stored one at all.
func TestStoredCheckpointRef(t *testing.T) {
	e := &Executor{opts: Options{Launch: noLaunch{}, Store: "s3://b/exp"}, stateDir: "/exp/" + StateDirName}
	p := &proc{e: e, spec: hone.StartSpec{Dir: "/exp/trial_a"}}
	dir, stored, err := p.checkpointRef("store:trial_a/" + hone.UploadDirName + "/ab12")
	if err != nil || dir != "" || stored != "trial_a/"+hone.UploadDirName+"/ab12" {
		t.Fatalf("own upload: %q, %q, %v", dir, stored, err)
	}
	for _, ref := range []string{
		"store:trial_b/" + hone.UploadDirName + "/ab12",
		"store:trial_a/checkpoint_000001",
		"store:trial_a/" + hone.UploadDirName + "/ab12/../../../trial_b/" + hone.UploadDirName + "/x",
		"store:trial_a/" + hone.UploadDirName + "/ab12/sub",
		"store:trial_a/" + hone.UploadDirName,
	} {
		if _, _, err := p.checkpointRef(ref); err == nil {
			t.Errorf("%s: accepted", ref)
		}
	}
	local := &proc{e: &Executor{stateDir: "/exp/" + StateDirName}, spec: hone.StartSpec{Dir: "/exp/trial_a"}}
	if _, _, err := local.checkpointRef("store:trial_a/" + hone.UploadDirName + "/ab12"); err == nil ||
		!strings.Contains(err.Error(), "staged directories") {
		t.Errorf("a stored checkpoint from a trial that stages locally: %v", err)
	}
}
