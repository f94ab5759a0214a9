package bicepcheck

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ordersink/orders-consumer/internal/clocks"
	"github.com/ordersink/orders-consumer/internal/funcapp"
)

// Rule ids of the HTTP API (SubmitOrder, GetOrder) and of the settings the handler reads.
const (
	RuleHTTPAuth        = "http-auth"
	RuleContainers      = "containers"
	RuleHandlerSettings = "handler-settings"
)

const typeAuthSettings = "authsettingsV2" // the name of the Microsoft.Web/sites/config resource

// checkHTTPAuth: nobody reaches an HTTP function without a credential. Every httpTrigger asks
// for a function key; the site answers HTTPS only with TLS 1.2 or later on every plan; and the
// optional App Service Authentication in front answers 401 to a request without a valid token
// on every plan.
func checkHTTPAuth(p *Project) []Finding {
	var out []Finding
	for _, fn := range p.App.Functions {
		for _, b := range fn.Bindings {
			if !strings.EqualFold(b.Type, "httpTrigger") {
				continue
			}
			at := Finding{Rule: RuleHTTPAuth, File: fn.Path, Line: 1}
			switch level, _ := b.Raw["authLevel"].(string); strings.ToLower(level) {
			case "function":
				continue
			case "anonymous":
				at.Message = fmt.Sprintf("%s: authLevel anonymous lets anyone who finds the URL call it; use function (a named key per partner, docs/security.md#http-api)", fn.Name)
			case "admin":
				at.Message = fmt.Sprintf("%s: authLevel admin makes callers hold the master key, which opens every function and the host's admin API; use function", fn.Name)
			case "":
				at.Message = fmt.Sprintf("%s: no authLevel; write function explicitly", fn.Name)
			default:
				at.Message = fmt.Sprintf("%s: authLevel %q is not one the host knows; use function", fn.Name, level)
			}
			out = append(out, at)
		}
	}
	for _, site := range p.resources(typeSite) {
		props := site.Body.Get("properties")
		if !props.Get("httpsOnly").IsBool(true) {
			out = append(out, site.finding(RuleHTTPAuth, "site %s: properties.httpsOnly must be true: a function key sent over plain HTTP is a key given away", site.Symbol))
		}
		for _, b := range planBranches(site.File, props.Get("siteConfig")) {
			if v := site.File.Literal(b.config.Get("minTlsVersion")); v != "1.2" && v != "1.3" {
				out = append(out, site.finding(RuleHTTPAuth, "site %s: siteConfig.minTlsVersion is %q in %s, want 1.2 (or 1.3) on every plan", site.Symbol, v, b.label))
			}
		}
	}
	for _, f := range p.Files {
		for _, r := range f.ResourcesOfType(typeSiteConfig) {
			if !r.Existing && r.Name(f) == typeAuthSettings {
				out = append(out, checkEasyAuth(located{f, r})...)
			}
		}
	}
	return out
}

// planBranch is the siteConfig one plan gets, labelled by the text that chose it.
type planBranch struct {
	label  string
	config *Value
}

// planBranches returns the siteConfig of every plan: the value itself, or both sides of a
// ternary, each followed to the variable it names.
func planBranches(f *File, v *Value) []planBranch {
	v = f.resolve(v)
	if v == nil || v.Kind != KindTernary {
		return []planBranch{{"siteConfig", v}}
	}
	return []planBranch{{textOf(v.Items[0]), f.resolve(v.Items[0])}, {textOf(v.Items[1]), f.resolve(v.Items[1])}}
}

func checkEasyAuth(auth located) []Finding {
	props := auth.Body.Get("properties")
	var out []Finding
	bad := func(format string, args ...any) {
		out = append(out, auth.finding(RuleHTTPAuth, "App Service Authentication: "+format, args...))
	}
	if !props.Get("globalValidation", "requireAuthentication").IsBool(true) {
		bad("globalValidation.requireAuthentication must be true, or requests without a token reach the app")
	}
	if a := auth.File.Literal(props.Get("globalValidation", "unauthenticatedClientAction")); a != "Return401" {
		bad("globalValidation.unauthenticatedClientAction is %q, want Return401: an API client cannot follow a login redirect, and AllowAnonymous lets it through", a)
	}
	if !props.Get("httpSettings", "requireHttps").IsBool(true) {
		bad("httpSettings.requireHttps must be true: a bearer token over plain HTTP is a token given away")
	}
	aad := props.Get("identityProviders", "azureActiveDirectory")
	if !aad.Get("enabled").IsBool(true) || aad.Get("registration", "clientId") == nil {
		bad("identityProviders.azureActiveDirectory must be enabled with registration.clientId (Entra ID is the one provider the HTTP API takes)")
	}
	if aad.Get("validation", "allowedAudiences") == nil {
		bad("identityProviders.azureActiveDirectory.validation.allowedAudiences must be set: a token issued for another API of the tenant would be accepted")
	}
	if aad.Get("registration", "clientSecretSettingName") != nil {
		bad("registration.clientSecretSettingName is set: validating bearer tokens needs no client secret, and this deployment holds none")
	}
	if !props.Get("platform", "enabled").IsBool(true) {
		bad("platform.enabled must be true on every plan: an HTTP API deployed with easyAuthClientId must not be open on one of them")
	}
	return out
}

// containerSettings are the settings that name a Cosmos DB container, with the partition key the
// code that uses the container relies on.
var containerSettings = []struct{ setting, partitionKey, why string }{
	{"COSMOS_CONTAINER", "/orderId", "cosmos.Store: id = partition key = orderId makes the create a claim (docs/contract.md §9)"},
	{"IDEMPOTENCY_CONTAINER", "/id", "cosmos.KeyStore: id = partition key = the key's scope hash makes the create a claim (docs/adr/0011-idempotency-key-scope-and-ttl.md)"},
}

// checkContainers: every container a setting names (as the deployment sets it, or the handler's
// default where the deployment does not) is declared, partitioned the way the code relies on,
// has TTL on (both hold records with their own ttl), and is covered by a Cosmos DB data role.
func checkContainers(p *Project) []Finding {
	s, ok := p.appSettings()
	if !ok {
		return nil // rule app-settings reports it
	}
	var out []Finding
	for _, cs := range containerSettings {
		name := ""
		if v, set := s.values[cs.setting]; set {
			if name = p.literalAcross(s.file, v); name == "" {
				out = append(out, Finding{Rule: RuleContainers, File: s.file.Path, Line: s.line, Message: fmt.Sprintf("%s = %s is computed; name the container with a literal (bicep/README.md) so it can be checked", cs.setting, textOf(v))})
				continue
			}
		} else if h := p.App.HandlerSetting(cs.setting); h != nil {
			name = h.Default
		}
		if name == "" {
			continue // neither set nor read
		}
		c, ok := p.named(typeContainer, name)
		if !ok {
			out = append(out, Finding{Rule: RuleContainers, File: s.file.Path, Line: s.line, Message: fmt.Sprintf("%s names container %q, which no .bicep file declares", cs.setting, name)})
			continue
		}
		res := c.Body.Get("properties", "resource")
		if paths := literalStrings(c.File, res.Get("partitionKey", "paths")); len(paths) != 1 || paths[0] != cs.partitionKey {
			out = append(out, c.finding(RuleContainers, "container %q (%s) is partitioned on %v, want [%s]: %s", name, cs.setting, paths, cs.partitionKey, cs.why))
		}
		if ttl := res.Get("defaultTtl"); ttl == nil || strings.ReplaceAll(ttl.Text, " ", "") != "-1" {
			out = append(out, c.finding(RuleContainers, "container %q (%s): defaultTtl must be -1 (TTL on, no default): without it Cosmos ignores the records' own ttl and they never expire", name, cs.setting))
		}
		if !p.dataRoleCovers(name) {
			out = append(out, c.finding(RuleContainers, "no Cosmos DB data role assignment covers container %q (%s): scope it to /dbs/<database> or name the container in /colls/", name, cs.setting))
		}
	}
	return out
}

// dataRoleCovers reports whether a Cosmos DB SQL role assignment's scope covers the container:
// the whole database (…/dbs/<database>) or the container itself (…/colls/<name>).
func (p *Project) dataRoleCovers(container string) bool {
	for _, l := range p.resources(typeSQLRole) {
		scope := textOf(l.Body.Get("properties", "scope"))
		_, colls, scoped := strings.Cut(scope, "/colls/")
		switch {
		case !strings.Contains(scope, "/dbs/"):
		case !scoped, strings.TrimSuffix(strings.Trim(colls, "'"), "/") == container:
			return true
		}
	}
	return false
}

// platformPrefixes are settings the host, the platform or an SDK reads, not cmd/handler.
var platformPrefixes = []string{"AzureWebJobs", "FUNCTIONS_", "WEBSITE_", "APPLICATIONINSIGHTS_", "AZURE_", "SCM_"}

func isPlatformSetting(name string) bool {
	if strings.Contains(name, "__") || strings.Contains(name, ".") {
		return true // identity-based connection settings, AzureWebJobs.<function>.Disabled
	}
	for _, prefix := range platformPrefixes {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// checkHandlerSettings compares the app settings the deployment gives the handler with what the
// handler reads (envconfig tags under cmd/handler) and what docs/contract.md §2 documents: a
// setting nobody reads is a misspelling or a leftover, a required one must be set, a literal must
// parse as its type and, when a number, differ from the handler's default (which would otherwise
// have a second home here), and the HTTP API's clocks must nest (the handler checks the same at start;
// here a template that would stop it is caught before deploying).
func checkHandlerSettings(p *Project) []Finding {
	s, ok := p.appSettings()
	if !ok || p.App.Handler == nil {
		return nil
	}
	var out []Finding
	bad := func(format string, args ...any) {
		out = append(out, Finding{Rule: RuleHandlerSettings, File: s.file.Path, Line: s.line, Message: fmt.Sprintf(format, args...)})
	}
	for _, name := range sortedKeys(s.values) {
		if isPlatformSetting(name) {
			continue
		}
		h := p.App.HandlerSetting(name)
		if h == nil {
			bad("app setting %s: cmd/handler does not read it (no envconfig tag): misspelt, or a setting of another branch not merged yet", name)
		}
		if !p.App.IsDocumented(name) {
			bad("app setting %s is not documented in docs/contract.md §2", name)
		}
		if h == nil {
			continue
		}
		if v := p.literalAcross(s.file, s.values[name]); v != "" {
			if err := parsesAs(h.Type, v); err != nil {
				bad("app setting %s = %q: %v (cmd/handler reads it as %s, %s)", name, v, err, h.Type, h.Pos)
			} else if sameNumber(h.Type, v, h.Default) {
				bad("app setting %s = %q restates the handler's default (%s): leave it out, so the number has one home", name, v, h.Pos)
			}
		}
	}
	for _, h := range p.App.Handler {
		if h.Required && !s.has(h.Name) {
			bad("app setting %s is missing: cmd/handler requires it (%s)", h.Name, h.Pos)
		}
	}
	return append(out, p.httpAPIClocks(s)...)
}

// sameNumber reports whether two settings of a numeric type say the same number: 60s is 1m.
func sameNumber(goType, a, b string) bool {
	switch goType {
	case "time.Duration":
		da, errA := time.ParseDuration(a)
		db, errB := time.ParseDuration(b)
		return errA == nil && errB == nil && da == db
	case "int", "int64":
		na, errA := strconv.ParseInt(a, 10, 64)
		nb, errB := strconv.ParseInt(b, 10, 64)
		return errA == nil && errB == nil && na == nb
	}
	return false
}

func parsesAs(goType, v string) error {
	switch goType {
	case "time.Duration":
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("not a Go duration such as 20s or 24h")
		}
	case "int", "int64":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("not an integer")
		}
	}
	return nil
}

// httpAPIClocks applies the checks the handler makes at start (internal/clocks) to the values
// the template gives it: IDEMPOTENCY_LEASE > 0, IDEMPOTENCY_KEY_TTL at least the lease and at
// most what Cosmos DB takes as a ttl, and SUBMIT_DEADLINE within the share of the lease and of
// host.json's functionTimeout a deadline may take. Each value is the template's literal or the
// handler's default; a rule with an unknown side is skipped.
func (p *Project) httpAPIClocks(s appSettings) []Finding {
	value := func(name string) (time.Duration, bool) {
		v := ""
		if raw, set := s.values[name]; set {
			v = p.literalAcross(s.file, raw)
		} else if h := p.App.HandlerSetting(name); h != nil {
			v = h.Default
		}
		d, err := time.ParseDuration(v)
		return d, err == nil
	}
	var out []Finding
	check := func(err error) {
		if err != nil {
			out = append(out, Finding{Rule: RuleHandlerSettings, File: s.file.Path, Line: s.line, Message: err.Error()})
		}
	}
	ttl, okTTL := value("IDEMPOTENCY_KEY_TTL")
	lease, okLease := value("IDEMPOTENCY_LEASE")
	deadline, okDeadline := value("SUBMIT_DEADLINE")
	if okTTL && okLease {
		check(clocks.KeyLifetime(ttl, lease))
	}
	if okLease && okDeadline {
		check(clocks.SubmitWithinLease(deadline, lease))
	}
	if timeout, err := funcapp.ParseTimeSpan(p.App.Host.FunctionTimeout); okDeadline && err == nil {
		check(clocks.Within("SUBMIT_DEADLINE", deadline, "functionTimeout", timeout))
	}
	return out
}
