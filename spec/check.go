package spec

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/redact"
	"github.com/hone-tune/hone/space"
)

// Validate checks every value of s, including its resources against this
// machine's CPUs and memory, and returns all problems at once as an
// Errors value, or nil. For a spec from Parse the errors carry the lines of
// the offending keys. Validate builds the searcher and the scheduler to
// check them (cheaply, and without side effects) unless something else is
// already wrong.
func (s *Spec) Validate() error {
	c := &collector{file: s.file, lines: s.lines}
	s.check(c)
	return c.result()
}

// check validates s, recording problems in c, and returns the plugins it
// built (nil if anything is wrong).
func (s *Spec) check(c *collector) (hone.Searcher, hone.Scheduler) {
	s.checkName(c)
	if s.Trainable != "" {
		// Trial directory names make it safe (a slash becomes _).
		checkLabel(c, "trainable", s.Trainable, "")
	}
	if s.Storage == "" {
		c.errorf("storage", "must not be empty")
	} else if _, _, err := storageDir(s.Storage); err != nil {
		c.errorf("storage", "%v", err)
	}
	if s.Mode != "" && !s.Mode.Valid() {
		c.notAllowed(nil, "mode", modeNames(), "allowed values are min and max, got %q", s.Mode)
	}
	if s.Mode != "" && s.Metric == "" && !c.has("metric") {
		c.errorf("mode", "is set but metric is empty: name the metric to minimize or maximize")
	}
	if s.NumSamples < -1 || s.NumSamples == 0 {
		c.errorf("num_samples", "must be -1 (until a stop condition ends the experiment) or >= 1, got %d", s.NumSamples)
	}
	if !c.has("search_space") {
		if err := s.SearchSpace.Validate(); err != nil {
			c.errorf("search_space", "%s", spaceText(err)).Err = err
		}
		for i, p := range s.PointsToEvaluate {
			s.checkPoint(c, s.SearchSpace, p, index("points_to_evaluate", i))
		}
	}
	s.checkStop(c)
	s.checkResources(c, thisMachine(), s.Executor.Name != "local")
	if s.MaxConcurrentTrials < 0 {
		c.errorf("max_concurrent_trials", "must be >= 0 (0 = as many as resources allow), got %d", s.MaxConcurrentTrials)
	}
	if s.MaxPendingTrials < 0 {
		c.errorf("max_pending_trials", "must be >= 1, or 0 to let hone choose, got %d", s.MaxPendingTrials)
	}
	if s.TrialTimeout < 0 {
		c.errorf("trial_timeout", "must be > 0, or 0 for no limit, got %v", s.TrialTimeout)
	}
	if s.ReportTimeout < 0 {
		c.errorf("report_timeout", "must be > 0, or 0 for no limit, got %v", s.ReportTimeout)
	}
	if s.Searcher.MaxConcurrent < 0 {
		c.errorf("searcher.max_concurrent", "must be >= 0 (0 = no limit), got %d", s.Searcher.MaxConcurrent)
	}
	cp := s.Checkpoint
	if cp.NumToKeep < 0 {
		c.errorf("checkpoint.num_to_keep", "must be >= 1, or 0 to keep all, got %d", cp.NumToKeep)
	}
	if cp.ScoreOrder != "" && !cp.ScoreOrder.Valid() {
		c.notAllowed(nil, "checkpoint.score_order", modeNames(), "allowed values are max and min, got %q", cp.ScoreOrder)
	}
	if cp.Frequency < 0 {
		c.errorf("checkpoint.frequency", "must be >= 0 (0 = never on schedule), got %d", cp.Frequency)
	}
	if s.Failure.MaxFailures < -1 {
		c.errorf("failure.max_failures", "must be -1 (retry without limit), 0 (never retry) or a positive count, got %d", s.Failure.MaxFailures)
	}
	s.checkCommand(c)
	if s.StopGrace <= 0 {
		c.errorf("stop_grace", "must be > 0, got %v", s.StopGrace)
	}
	if s.GPUs < 0 {
		c.errorf("gpus", "must be >= 0, got %d", s.GPUs)
	}

	// Plugins: their parameters are always checked; they are built only
	// when the rest of the spec, which they depend on, is valid.
	clean := len(c.errs) == 0
	buildSearcher := s.readSearcher(c)
	buildScheduler := s.readScheduler(c)
	s.executor = s.readExecutor(c)
	if !clean || len(c.errs) > 0 || buildSearcher == nil || buildScheduler == nil {
		return nil, nil
	}
	sr, err := buildSearcher(s)
	if err != nil {
		c.pluginError("searcher", s.Searcher.Name, err)
	}
	sc, err := buildScheduler(s)
	if err != nil {
		c.pluginError("scheduler", s.Scheduler.Name, err)
	}
	if len(c.errs) > 0 {
		return nil, nil
	}
	if s.severalObjectives() {
		s.checkObjectives(c, "searcher", s.Searcher.Name, sr, sortedKeys(MultiObjectiveSearchers()))
		s.checkObjectives(c, "scheduler", s.Scheduler.Name, sc, sortedKeys(MultiObjectiveSchedulers()))
		if len(c.errs) > 0 {
			return nil, nil
		}
	}
	// A scheduler that works as a pair with its searcher (dehb) is joined
	// to it here.
	if b, ok := sc.(interface{ Bind(hone.Searcher) error }); ok {
		if err := b.Bind(sr); err != nil {
			c.pluginError("scheduler", s.Scheduler.Name, err)
			return nil, nil
		}
	}
	return sr, sc
}

// checkObjectives reports a searcher or scheduler (kind) that does not
// take the spec's several objectives or constraints, with the names that
// do (allowed), or the plugin's own objection to them.
func (s *Spec) checkObjectives(c *collector, kind, name string, plugin any, allowed []string) {
	m, ok := plugin.(hone.MultiObjective)
	// A plugin that shares its type with one that takes several
	// objectives (hyperband_for_bohb, hyperband's) refuses them with
	// hone.ErrOneObjective: it is reported as one that does not take them.
	if !ok || errors.Is(m.CheckObjectives(s.ResolvedObjectives(), s.Constraints), hone.ErrOneObjective) {
		c.notAllowed(nil, kind, allowed, "%s %s optimises one objective and honours no constraint; with %s use one of %s",
			kind, name, s.objectivesText(), strings.Join(allowed, ", ")).Err = hone.ErrOneObjective
		return
	}
	if err := m.CheckObjectives(s.ResolvedObjectives(), s.Constraints); err != nil {
		c.pluginError(kind, name, err)
	}
}

// pluginError reports a plugin's construction error at path, keeping it
// as the Error's Err so that errors.As reaches the plugin's
// *hone.ParamError. Its text is the ParamError's, which names the plugin
// already; any other error is prefixed with the plugin's name.
func (c *collector) pluginError(path, name string, err error) {
	msg := err.Error()
	if pe := (*hone.ParamError)(nil); !errors.As(err, &pe) {
		msg = name + ": " + msg
	}
	c.errorf(path, "%s", msg).Err = err
}

func (s *Spec) checkName(c *collector) {
	switch n := s.Name; {
	case n == "":
		c.errorf("name", "must not be empty")
	case n == "." || n == "..":
		c.errorf("name", "%q cannot name a directory; choose another name", n)
	default:
		checkLabel(c, "name", n, "names a directory under storage")
	}
}

// checkLabel checks a name that becomes part of a directory name and is
// printed in tables and logs: valid UTF-8, no slash, no control character
// (a newline, a tab, NUL, ...), and at least one visible character.
// what says which directory it names, for the slash error; "" allows
// slashes.
func checkLabel(c *collector, path, n, what string) {
	switch {
	case !utf8.ValidString(n):
		c.errorf(path, "must be valid UTF-8 text, got %q", n)
	case what != "" && strings.ContainsAny(n, "/\\"):
		c.errorf(path, "%s, so it cannot contain a slash, got %q", what, n)
	case strings.IndexFunc(n, unicode.IsControl) >= 0:
		c.errorf(path, "must not contain control characters such as newlines or tabs, got %q", n)
	case strings.IndexFunc(n, visible) < 0:
		c.errorf(path, "must contain a visible character, got %q", n)
	}
}

// visible reports whether r shows as a mark on the screen: a graphic
// character other than a space.
func visible(r rune) bool { return unicode.IsGraphic(r) && !unicode.IsSpace(r) }

// RemoteSchemes are the URL schemes of object stores a storage value may
// name.
var RemoteSchemes = []string{"s3"}

// storageDir returns the local directory a storage value names: a path as
// it is, or the path of a file:///abs/path URL. An object-store URL
// (RemoteSchemes) is returned as it is, with remote true. Other URLs are
// errors.
func storageDir(v string) (dir string, remote bool, err error) {
	if !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return "", false, fmt.Errorf("must be a path or a URL, without control characters, got %q", v)
	}
	scheme, _, isURL := strings.Cut(v, "://")
	if !isURL || len(scheme) < 2 || !validScheme(scheme) {
		return v, false, nil // a path (a one-letter "scheme" is a drive letter)
	}
	allowed := "a local path, file:///abs/path, or s3://bucket/prefix?endpoint=...&region=..."
	if slices.Contains(RemoteSchemes, strings.ToLower(scheme)) {
		u, err := url.Parse(v)
		if err != nil {
			return "", false, fmt.Errorf("not a valid URL (%v); allowed: %s", err, allowed)
		}
		if u.Host == "" {
			return "", false, fmt.Errorf("%s URL names no bucket: want %s://BUCKET/PREFIX", scheme, scheme)
		}
		if u.User != nil {
			return "", false, fmt.Errorf("%s URL must not carry credentials; they come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the shared config)", scheme)
		}
		if u.Fragment != "" {
			return "", false, fmt.Errorf("%s URL must not have a fragment (#...)", scheme)
		}
		return v, true, nil
	}
	if !strings.EqualFold(scheme, "file") {
		return "", false, fmt.Errorf("unsupported URL scheme %q; allowed: %s", scheme, allowed)
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", false, fmt.Errorf("not a valid file URL (%v); allowed: %s", err, allowed)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", false, fmt.Errorf("file URL names host %q; only local paths are supported: file:///abs/path", u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" || !filepath.IsAbs(u.Path) {
		return "", false, fmt.Errorf("want file:///abs/path (an absolute path, no query), got %q", v)
	}
	return filepath.Clean(u.Path), false, nil
}

// validScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func validScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// StorageDir returns the local directory that Storage names: Storage
// itself for a path, or the path of a file:///abs/path URL. It returns an
// error for an object-store URL (see StorageURL) or a value Validate
// refuses.
func (s *Spec) StorageDir() (string, error) {
	d, remote, err := storageDir(s.Storage)
	if err != nil {
		return "", fmt.Errorf("storage: %w", err)
	}
	if remote {
		return "", fmt.Errorf("storage: %s is an object store, not a directory", Redact(s.Storage))
	}
	return d, nil
}

// StorageURL returns the experiment's object-store URL, Storage's URL with
// Name appended to its path, and true; or "", false when Storage is a
// local directory.
func (s *Spec) StorageURL() (string, bool) {
	_, remote, err := storageDir(s.Storage)
	if err != nil || !remote {
		return "", false
	}
	return JoinURL(s.Storage, s.Name), true
}

// JoinURL appends name as one more element of the URL's path, keeping its
// query.
func JoinURL(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw + "/" + name
	}
	u.Path = path.Join("/", u.Path, name)
	u.RawPath = ""
	return u.String()
}

// Redact returns a URL with its user information and the values of
// secret-looking query parameters hidden, for messages.
func Redact(raw string) string { return redact.URL(raw) }

// checkPoint reports keys of a point that the search space does not have.
// Keys under a domain or a constant are not checked: the point replaces it
// whole.
func (s *Spec) checkPoint(c *collector, sp map[string]any, point map[string]any, path string) {
	keys := make([]string, 0, len(point))
	for k := range point {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := join(path, k)
		sv, ok := sp[k]
		if !ok {
			have := make([]string, 0, len(sp))
			for k := range sp {
				have = append(have, k)
			}
			msg := "not in search_space"
			if near := closest(k, have); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			if len(have) > 0 {
				msg += "; search_space has: " + strings.Join(sorted(have), ", ")
			}
			c.errorf(p, "%s", msg)
			continue
		}
		sub, isSub := asMap(sv)
		pv, isMap := point[k].(map[string]any)
		if isSub && isMap {
			s.checkPoint(c, sub, pv, p)
		}
	}
}

func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case space.Space:
		return x, true
	}
	return nil, false
}

func (s *Spec) checkStop(c *collector) {
	st := s.Stop
	if st.TrainingIteration < 0 {
		c.errorf("stop."+hone.FieldTrainingIteration, "must be >= 1, got %d", st.TrainingIteration)
	}
	for _, th := range st.Thresholds {
		p := join("stop", th.Field)
		if math.IsNaN(th.Value) || math.IsInf(th.Value, 0) {
			c.errorf(p, "must be a finite number, got %v", th.Value)
		}
		if th.Mode != hone.Min && th.Mode != hone.Max {
			c.errorf(p, "threshold mode must be min or max, got %q", th.Mode)
		}
		if th.Field == "" {
			c.errorf("stop", "a threshold needs a result field")
		}
	}
	if st.TimeBudget < 0 {
		c.errorf("stop."+stopTimeBudget, "must be > 0 (seconds), got %v", st.TimeBudget.Seconds())
	}
	if pl := st.Plateau; pl != nil {
		p := "stop." + stopPlateau
		if pl.Metric == "" && s.Metric == "" && !c.has(p+".metric") {
			c.errorf(p+".metric", "required when the experiment has no metric")
		}
		if pl.Std < 0 {
			c.errorf(p+".std", "must be >= 0, got %s", formatNum(pl.Std))
		}
		if pl.NumResults < 2 {
			c.errorf(p+".num_results", "must be >= 2, got %d", pl.NumResults)
		}
		if pl.GracePeriod < 0 {
			c.errorf(p+".grace_period", "must be >= 0, got %d", pl.GracePeriod)
		}
	}
}

// checkResources checks what each trial needs against the machine m.
//
// On a cluster (elsewhere is true) the trials run on other machines: only
// the values themselves are checked, not against this machine.
func (s *Spec) checkResources(c *collector, m machine, elsewhere bool) {
	r := s.Resources
	if elsewhere {
		m = machine{cpus: math.MaxInt}
	}
	nonNeg := func(path string, v float64) bool {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			c.errorf(path, "must be a finite number >= 0, got %s", formatNum(v))
			return false
		}
		return true
	}
	if nonNeg("resources.cpu", r.CPU) && r.CPU > float64(m.cpus) {
		c.errorf("resources.cpu", "each trial needs %s CPUs but this machine has %d", formatNum(r.CPU), m.cpus)
	}
	switch {
	case !nonNeg("resources.gpu", r.GPU):
	case r.GPU > 1 && r.GPU != math.Trunc(r.GPU):
		c.errorf("resources.gpu", "must be a fraction below 1 (trials share a GPU) or a whole number (each trial gets GPUs of its own), got %s", formatNum(r.GPU))
	case !elsewhere && s.GPUs >= 0 && r.GPU > float64(s.GPUs):
		c.errorf("resources.gpu", "each trial needs %s GPU(s) but gpus, the number the machine has, is %d", formatNum(r.GPU), s.GPUs)
	}
	switch {
	case r.Memory < 0:
		c.errorf("resources.memory", "must be >= 0, got %d", r.Memory)
	case m.memory > 0 && r.Memory > m.memory:
		c.errorf("resources.memory", "each trial needs %s but this machine has %s (%d bytes)", formatSize(r.Memory), formatSize(m.memory), m.memory)
	}
	for _, k := range sortedKeys(r.Custom) {
		p := join("resources.custom", k)
		if !nonNeg(p, r.Custom[k]) {
			continue
		}
		have, ok := s.CustomResources[k]
		switch {
		case elsewhere:
		case !ok && r.Custom[k] > 0:
			c.errorf(p, "the machine offers no %q; say how much it has under custom_resources", k)
		case ok && r.Custom[k] > have:
			c.errorf(p, "each trial needs %s but custom_resources.%s is %s", formatNum(r.Custom[k]), k, formatNum(have))
		}
	}
	for _, k := range sortedKeys(s.CustomResources) {
		nonNeg(join("custom_resources", k), s.CustomResources[k])
	}
}

func (s *Spec) checkCommand(c *collector) {
	if len(s.Command) == 0 {
		if !c.has("command") {
			c.errorf("command", "required: the program each trial runs and its arguments, as a list, e.g. [python3, train.py]")
		}
	} else if s.Command[0] == "" {
		c.errorf("command[0]", "the program name must not be empty")
	}
	for _, k := range sortedKeys(s.Env) {
		p := join("env", k)
		switch {
		case k == "" || strings.ContainsRune(k, '=') || strings.IndexFunc(k, unicode.IsControl) >= 0 || strings.IndexFunc(k, unicode.IsSpace) >= 0:
			c.errorf(p, "not a valid environment variable name")
		case strings.HasPrefix(k, "HONE_"):
			c.errorf(p, "hone sets %s for each trial; choose another name", k)
		case strings.ContainsRune(s.Env[k], 0):
			c.errorf(p, "the value must not contain a NUL byte")
		}
	}
	if !c.has("working_dir") {
		fi, err := os.Stat(s.WorkingDir)
		switch {
		case s.WorkingDir == "":
			c.errorf("working_dir", "must not be empty")
		case err != nil:
			c.errorf("working_dir", "%s: no such directory", s.WorkingDir)
		case !fi.IsDir():
			c.errorf("working_dir", "%s is not a directory", s.WorkingDir)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// formatNum renders a number the way it is usually written: 1, 0.5, 1e-05.
func formatNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// modeNames are the values a mode may have.
func modeNames() []string { return []string{string(hone.Min), string(hone.Max)} }
