package hostemu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Route is an httpTrigger's route template as the host's router reads it
// (ASP.NET Core route templates): literal segments compared in any case,
// {name}, {name?} in the last segments, {name:constraint}, and {*name}
// taking the rest of the path.
type Route struct {
	Template string
	segments []routeSegment
}

type routeSegment struct {
	literal     string // "" for a parameter
	param       string
	optional    bool
	catchAll    bool
	constraints []constraint
}

// RouteParam is one route parameter of a matched request, in template order.
type RouteParam struct{ Name, Value string }

type constraint struct {
	name  string
	check func(string) bool
}

var guidPattern = regexp.MustCompile(`^[{(]?[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}[)}]?$`)

// constraints are the inline route constraints the emulator knows; a
// template using another is refused when the app is loaded rather than
// matched loosely.
var constraints = map[string]func(arg string) (func(string) bool, error){
	"int":     noArg(func(v string) bool { _, err := strconv.ParseInt(v, 10, 32); return err == nil }),
	"long":    noArg(func(v string) bool { _, err := strconv.ParseInt(v, 10, 64); return err == nil }),
	"bool":    noArg(func(v string) bool { return strings.EqualFold(v, "true") || strings.EqualFold(v, "false") }),
	"guid":    noArg(guidPattern.MatchString),
	"decimal": noArg(func(v string) bool { _, err := strconv.ParseFloat(v, 64); return err == nil }),
	"double":  noArg(func(v string) bool { _, err := strconv.ParseFloat(v, 64); return err == nil }),
	"alpha": noArg(func(v string) bool {
		return v != "" && strings.IndexFunc(v, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) < 0
	}),
	"minlength": intArg(func(n int) func(string) bool { return func(v string) bool { return len([]rune(v)) >= n } }),
	"maxlength": intArg(func(n int) func(string) bool { return func(v string) bool { return len([]rune(v)) <= n } }),
	"length":    intArg(func(n int) func(string) bool { return func(v string) bool { return len([]rune(v)) == n } }),
}

func noArg(f func(string) bool) func(string) (func(string) bool, error) {
	return func(arg string) (func(string) bool, error) {
		if arg != "" {
			return nil, fmt.Errorf("takes no argument")
		}
		return f, nil
	}
}

func intArg(f func(int) func(string) bool) func(string) (func(string) bool, error) {
	return func(arg string) (func(string) bool, error) {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("needs a length, got %q", arg)
		}
		return f(n), nil
	}
}

// ParseRoute reads a route template (without the route prefix).
func ParseRoute(template string) (*Route, error) {
	r := &Route{Template: template}
	t := strings.Trim(template, "/")
	if t == "" {
		return r, nil
	}
	for i, part := range strings.Split(t, "/") {
		seg, err := parseSegment(part)
		if err != nil {
			return nil, fmt.Errorf("route %q, segment %d: %w", template, i+1, err)
		}
		r.segments = append(r.segments, seg)
	}
	for i, s := range r.segments {
		last := i == len(r.segments)-1
		if s.catchAll && !last {
			return nil, fmt.Errorf("route %q: a catch-all parameter must be the last segment", template)
		}
		if s.optional && !last && !r.segments[i+1].optional {
			return nil, fmt.Errorf("route %q: an optional parameter must be followed only by optional ones", template)
		}
	}
	return r, nil
}

func parseSegment(part string) (routeSegment, error) {
	if part == "" {
		return routeSegment{}, fmt.Errorf("empty segment")
	}
	if !strings.HasPrefix(part, "{") || !strings.HasSuffix(part, "}") {
		if strings.ContainsAny(part, "{}") {
			return routeSegment{}, fmt.Errorf("%q: a parameter must be a whole segment here", part)
		}
		return routeSegment{literal: part}, nil
	}
	body := part[1 : len(part)-1]
	var seg routeSegment
	if rest, ok := strings.CutPrefix(body, "*"); ok {
		seg.catchAll, body = true, strings.TrimPrefix(rest, "*")
	}
	name, cons, _ := strings.Cut(body, ":")
	if strings.HasSuffix(cons, "?") || cons == "" && strings.HasSuffix(name, "?") {
		seg.optional = true
		cons, name = strings.TrimSuffix(cons, "?"), strings.TrimSuffix(name, "?")
	}
	if name == "" || strings.ContainsAny(name, "{}?*=") {
		return routeSegment{}, fmt.Errorf("%q: bad parameter name", part)
	}
	seg.param = name
	if cons == "" {
		return seg, nil
	}
	for _, c := range strings.Split(cons, ":") {
		cname, arg, _ := strings.Cut(c, "(")
		arg = strings.TrimSuffix(arg, ")")
		mk, ok := constraints[strings.ToLower(cname)]
		if !ok {
			return routeSegment{}, fmt.Errorf("%q: the emulator does not know the constraint %q", part, cname)
		}
		check, err := mk(arg)
		if err != nil {
			return routeSegment{}, fmt.Errorf("%q: constraint %s %w", part, cname, err)
		}
		seg.constraints = append(seg.constraints, constraint{name: cname, check: check})
	}
	return seg, nil
}

// Match matches the path segments after the route prefix, already
// percent-decoded; it returns the parameters given, in template order (an
// optional one left out is not among them, as in the router's values).
func (r *Route) Match(segments []string) ([]RouteParam, bool) {
	var params []RouteParam
	for i, s := range r.segments {
		if i >= len(segments) {
			if s.optional || s.catchAll {
				continue
			}
			return nil, false
		}
		v := segments[i]
		switch {
		case s.literal != "":
			if !strings.EqualFold(s.literal, v) {
				return nil, false
			}
			continue
		case s.catchAll:
			v = strings.Join(segments[i:], "/")
		}
		for _, c := range s.constraints {
			if !c.check(v) {
				return nil, false
			}
		}
		params = append(params, RouteParam{Name: s.param, Value: v})
		if s.catchAll {
			return params, true
		}
	}
	return params, len(segments) <= len(r.segments)
}

// precedence ranks a route against another matching the same path, as the
// router does: segment by segment, a literal before a constrained
// parameter, before a parameter, before an optional one, before a
// catch-all. A lower key wins.
func (r *Route) precedence() []int {
	key := make([]int, len(r.segments))
	for i, s := range r.segments {
		switch {
		case s.literal != "":
			key[i] = 1
		case s.catchAll:
			key[i] = 5
		case s.optional:
			key[i] = 4
		case len(s.constraints) > 0:
			key[i] = 2
		default:
			key[i] = 3
		}
	}
	return key
}
