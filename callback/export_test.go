package callback

import "github.com/hone-tune/hone/internal/fsutil"

// SetWriteFunc makes every file f opens from now on write with fn (a fault
// injected by a test).
func (f *TrialFiles) SetWriteFunc(fn fsutil.WriteFunc) { f.write = fn }
