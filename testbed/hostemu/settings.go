package hostemu

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ordersink/orders-consumer/internal/funcapp"
)

// Settings are the app settings the host and the handler see: in Azure the
// process environment; under Core Tools the environment plus the Values of
// local.settings.json, where a variable already in the environment wins.
type Settings struct {
	vals map[string]string
}

// NewSettings starts from environ (KEY=VALUE lines, as os.Environ returns).
func NewSettings(environ []string) *Settings {
	s := &Settings{vals: map[string]string{}}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			s.vals[k] = v
		}
	}
	return s
}

// LoadLocalSettings adds the Values of a local.settings.json that are not set
// yet, like Core Tools. A missing file is not an error. It returns the names
// it skipped because the environment had them.
func (s *Settings) LoadLocalSettings(path string) (skipped []string, err error) {
	ls, err := funcapp.LoadLocalSettings(path)
	if err != nil || ls == nil {
		return nil, err
	}
	for k, v := range ls.Values {
		if _, ok := s.vals[k]; ok {
			skipped = append(skipped, k)
			continue
		}
		s.vals[k] = v
	}
	sort.Strings(skipped)
	return skipped, nil
}

// Set sets one setting; it wins over the environment and local settings.
func (s *Settings) Set(key, value string) { s.vals[key] = value }

// Get returns a setting.
func (s *Settings) Get(key string) (string, bool) { v, ok := s.vals[key]; return v, ok }

// Int returns a setting that is an integer, or 0 when it is unset or not
// one.
func (s *Settings) Int(key string) int {
	v, _ := s.Get(key)
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}

// Environ returns the settings as KEY=VALUE lines for a child process.
func (s *Settings) Environ() []string {
	out := make([]string, 0, len(s.vals))
	for k, v := range s.vals {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// FunctionDisabled reports whether AzureWebJobs.<name>.Disabled is true, the
// app setting that switches a function off without a redeploy.
func (s *Settings) FunctionDisabled(name string) bool {
	v, _ := s.Get("AzureWebJobs." + name + ".Disabled")
	v = strings.TrimSpace(strings.ToLower(v))
	return v == "true" || v == "1"
}

// settingRef is a %NAME% reference to a setting.
var settingRef = regexp.MustCompile(`%[^%]*%`)

// Expand replaces %NAME% references by settings, as the host does for
// customHandler arguments; a reference to no setting stays as it is.
func (s *Settings) Expand(arg string) string {
	return settingRef.ReplaceAllStringFunc(arg, func(ref string) string {
		if v, ok := s.Get(ref[1 : len(ref)-1]); ok && len(ref) > 2 {
			return v
		}
		return ref
	})
}
