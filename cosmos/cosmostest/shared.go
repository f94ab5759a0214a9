package cosmostest

import (
	"sync"
	"testing"
)

// Shared is one Env for a whole test binary, started by the first test that
// asks for it, so that unit tests and fuzz targets of the same package run
// without Cosmos DB.
type Shared struct {
	name string
	once sync.Once
	env  *Env
	err  error
}

// NewShared returns a Shared whose database name includes name.
func NewShared(name string) *Shared { return &Shared{name: name} }

// Env returns the Env, starting it on first use; the test fails when Cosmos
// DB cannot be reached or started. With -short the test is skipped instead,
// so "go test -short" never starts an emulator.
func (s *Shared) Env(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Cosmos DB; -short runs without it")
	}
	s.once.Do(func() { s.env, s.err = Start(s.name) })
	if s.err != nil {
		t.Fatalf("this test needs Cosmos DB: %v", s.err)
	}
	return s.env
}

// Main runs the tests and then closes the Env if one was started. Call it
// from TestMain as os.Exit(shared.Main(m)).
func (s *Shared) Main(m *testing.M) int {
	code := m.Run()
	if s.env != nil {
		s.env.Close()
	}
	return code
}
