package local

// SetRename replaces the rename(2) of s, as this package's own tests do,
// for the tests of package local_test.
func SetRename(s *Store, rename func(oldpath, newpath string) error) { s.rename = rename }
