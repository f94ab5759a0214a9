package handler

import "testing"

// cosmosKeyStore is the idempotency-keys container of the test database.
func cosmosKeyStore(t testing.TB) keyStore {
	t.Helper()
	return cosmosDB.Env(t).Keys
}
