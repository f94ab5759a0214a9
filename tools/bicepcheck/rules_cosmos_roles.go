package bicepcheck

import (
	"fmt"
	"slices"
	"strings"
)

const typeSQLRoleDefinition = "Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions"

const deleteItems = "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/delete"

// operatorDataActions are the Cosmos DB data actions a custom role may grant: what ordersctl
// needs to read orders and delete parked bodies (ADR 0013). Creating, replacing or upserting
// items is the consumer's alone: an operator who could would write orders beside create-as-claim.
var operatorDataActions = []string{
	"Microsoft.DocumentDB/databaseAccounts/readMetadata",
	"Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/read",
	"Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/executeQuery",
	"Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/readChangeFeed",
	deleteItems,
}

// checkCosmosCustomRoles: a custom Cosmos DB role grants only operatorDataActions, is assignable
// on a container only (/colls/), and exists before the role assignments that name it; and one
// grants the delete, or ordersctl's deletes of parked bodies, which never expire, fail with 403.
func checkCosmosCustomRoles(p *Project) []Finding {
	var out []Finding
	deletes := false
	for _, l := range p.resources(typeSQLRoleDefinition) {
		props := l.Body.Get("properties")
		for _, perm := range props.Get("permissions").itemsOrNil() {
			for _, a := range perm.Get("dataActions").itemsOrNil() {
				action := l.File.Literal(a)
				switch {
				case action == deleteItems:
					deletes = true
				case !slices.Contains(operatorDataActions, action):
					out = append(out, l.finding(RuleRoles, "custom Cosmos DB role %s grants %s; an operator role may read and delete items only (%s), never write orders beside the consumer", l.Symbol, orText(action, a), strings.Join(operatorDataActions, ", ")))
				}
			}
		}
		for _, s := range props.Get("assignableScopes").itemsOrNil() {
			if scope := resolvedText(l.File, s); !strings.Contains(scope, "/colls/") {
				out = append(out, l.finding(RuleRoles, "custom Cosmos DB role %s is assignable at %s; scope it to the one container it serves (…/dbs/<database>/colls/<container>)", l.Symbol, scope))
			}
		}
		for _, a := range l.File.ResourcesOfType(typeSQLRole) {
			if !slices.ContainsFunc(a.Body.Get("dependsOn").itemsOrNil(), func(d *Value) bool { return textOf(d) == l.Symbol }) {
				out = append(out, located{l.File, a}.finding(RuleRoles, "Cosmos DB role assignments %s do not depend on the custom role %s: an assignment may start before its role exists, or beside it under the account's exclusive lock (412)", a.Symbol, l.Symbol))
			}
		}
	}
	if !deletes {
		at := Finding{Rule: RuleRoles, File: p.Files[0].Path, Line: 1}
		if roles := p.resources(typeSQLRole); len(roles) > 0 {
			at.File, at.Line = roles[0].File.Path, roles[0].Line
		}
		at.Message = fmt.Sprintf("no custom Cosmos DB role grants %s: the operator's ordersctl parked complete|resubmit cannot delete the parked bodies it settles (403 with Data Reader), and they never expire (ADR 0013)", deleteItems)
		out = append(out, at)
	}
	return out
}

// resolvedText is v's text with a variable or parameter name replaced by its value's text.
func resolvedText(f *File, v *Value) string {
	if lit := f.Literal(v); lit != "" {
		return lit
	}
	if named := f.lookup(textOf(v)); named != nil {
		return textOf(named)
	}
	return textOf(v)
}

func orText(literal string, v *Value) string {
	if literal != "" {
		return literal
	}
	return textOf(v)
}
