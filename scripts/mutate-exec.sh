#!/bin/sh
# The go test -exec program of make mutate (scripts/mutate.sh): it runs the
# test binary with the kernel's parent-death signal set, so that when
# gremlins kills `go test` at its timeout (a mutant that hangs), the test
# binary dies with it. Otherwise the hung binary lives on until its own
# -test.timeout, loading the machine and the emulator under the next
# mutants: their timed tests fail, and a hang shows up as kills.
exec setpriv --pdeathsig KILL -- "$@"
