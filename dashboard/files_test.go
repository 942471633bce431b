package dashboard_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-tune/hone/dashboard"
	"github.com/hone-tune/hone/results"
)

// TestFileEndpointsStayInside asks the file and listing endpoints for
// paths that leave the experiment directory (parent elements, absolute
// paths, encoded and backslashed forms, symbolic links to outside) or its
// trials' directories (the spec, the journal) and checks that none is
// served, while files and links inside a trial's directory are.
func TestFileEndpointsStayInside(t *testing.T) {
	dir := runSpec(t, "files", gatedSpec, curveFunc(2))
	exp, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	trialRel, err := filepath.Rel(dir, exp.Trials[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	secret := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The experiment's parent holds a secret too.
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "secret.txt"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sibling directory whose name starts with the experiment's.
	sibling := dir + "-sibling"
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sibling, "s.txt"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"to-secret":  secret,
		"to-outside": outside,
		"to-sibling": sibling,
		"to-parent":  "..",
		"to-spec":    "spec.yaml",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// In a trial's directory: a link that stays inside it, and links out
	// of it, to the experiment's spec and outside.
	for name, target := range map[string]string{
		"to-result": "result.json",
		"to-spec":   "../spec.yaml",
		"to-secret": secret,
	} {
		if err := os.Symlink(target, filepath.Join(dir, trialRel, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, trialRel, "notes.txt"), []byte("line 1\nline 2\nline 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, hs := serve(t, dir, nil)
	rel, err := filepath.Rel(filepath.Dir(dir), sibling)
	if err != nil {
		t.Fatal(err)
	}
	refused := []string{
		"",
		".",
		"spec.yaml",
		"experiment_state.jsonl",
		trialRel + "/to-spec",
		trialRel + "/to-secret",
		trialRel + "/../spec.yaml",
		"to-spec",
		"..",
		"../",
		"../secret.txt",
		"../../" + filepath.Base(root) + "/secret.txt",
		"a/../../secret.txt",
		"./../secret.txt",
		"../" + rel + "/s.txt",
		secret,
		"/etc/passwd",
		"//etc/passwd",
		`..\secret.txt`,
		`\etc\passwd`,
		"to-secret",
		"to-outside/x.txt",
		"to-outside",
		"to-sibling/s.txt",
		"to-parent/secret.txt",
		"to-parent",
		trialRel + "/notes.txt\x00.png",
	}
	for _, p := range refused {
		for _, ep := range []string{"file", "ls"} {
			u := hs.URL + "/api/" + ep + "?" + url.Values{"path": {p}}.Encode()
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "root:") || strings.Contains(string(b), "metric: loss") {
				t.Errorf("%s %q: %d %q, want 403", ep, p, resp.StatusCode, b)
			}
		}
	}
	// Percent-encoded dots arrive decoded, and are refused as such.
	resp, err := http.Get(hs.URL + "/api/file?path=%2e%2e%2fsecret.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("encoded ../secret.txt: %d, want 403", resp.StatusCode)
	}
	// A path the router cleans never reaches a file handler outside /api.
	resp, err = http.Get(hs.URL + "/assets/../../secret.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), "SECRET") {
		t.Errorf("/assets/../../secret.txt served the secret")
	}

	for p, want := range map[string]string{
		trialRel + "/notes.txt":   "line 1\nline 2\nline 3\n",
		trialRel + "/to-result":   `"loss"`,
		trialRel + "/result.json": `"loss"`,
	} {
		resp, err := http.Get(hs.URL + "/api/file?" + url.Values{"path": {p}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("file %q: %d %q, want %q", p, resp.StatusCode, b, want)
		}
	}
	// A tail starts after a newline.
	resp, err = http.Get(hs.URL + "/api/file?" + url.Values{"path": {trialRel + "/notes.txt"}, "tail": {"9"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "line 3\n" || resp.Header.Get("X-File-Size") != "21" {
		t.Errorf("tail of 9 bytes: %q (size %s), want %q", b, resp.Header.Get("X-File-Size"), "line 3\n")
	}
	// The listing of a trial's directory leaves symbolic links out.
	var entries []dashboard.Entry
	getJSON(t, hs.URL+"/api/ls?"+url.Values{"path": {trialRel}}.Encode(), http.StatusOK, &entries)
	if !slices.ContainsFunc(entries, func(e dashboard.Entry) bool { return e.Name == "notes.txt" }) {
		t.Errorf("listing of %s: %v", trialRel, entries)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, "to-") {
			t.Errorf("listing shows the link %s", e.Name)
		}
	}
	// A directory is no file.
	getJSON(t, hs.URL+"/api/file?"+url.Values{"path": {trialRel}}.Encode(), http.StatusBadRequest, nil)
}

// TestListen binds loopback addresses, and refuses any other unless told
// to allow it, warning when it does.
func TestListen(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		ln, warning, err := dashboard.Listen(addr, false)
		if err != nil {
			if addr == "[::1]:0" && strings.Contains(err.Error(), "cannot assign") {
				continue // no IPv6 on this machine
			}
			t.Fatalf("%s: %v", addr, err)
		}
		if warning != "" {
			t.Errorf("%s: warning %q", addr, warning)
		}
		ln.Close()
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if ln, _, err := dashboard.Listen(addr, false); err == nil || !strings.Contains(err.Error(), "--allow-remote") {
			if ln != nil {
				ln.Close()
			}
			t.Errorf("%s without allowRemote: %v, want a refusal naming --allow-remote", addr, err)
		}
	}
	ln, warning, err := dashboard.Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !strings.Contains(warning, "not a loopback address") {
		t.Errorf("warning %q", warning)
	}
	if _, _, err := dashboard.Listen("no-port", false); err == nil {
		t.Error("an address without a port was accepted")
	}
	if _, _, err := net.SplitHostPort(ln.Addr().String()); err != nil {
		t.Error(err)
	}
}
