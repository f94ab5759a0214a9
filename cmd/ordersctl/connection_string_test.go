package main

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// The Service Bus emulator is reached with its connection string, parsed
// by the SDK itself: the fake emulator is a TCP listener that must see the
// AMQP protocol header in the clear (UseDevelopmentEmulator=true turns TLS
// off) on the port the string names. It then hangs up, and the command
// fails within its deadline, naming the emulator.
func TestConnectionStringReachesTheEmulator(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	heard := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			heard <- nil
			return
		}
		head := make([]byte, 4)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.ReadFull(conn, head)
		conn.Close()
		heard <- head
	}()
	old := opTimeout
	opTimeout = 2 * time.Second
	t.Cleanup(func() { opTimeout = old })

	cs := strings.Replace(emulatorConnectionString, "sb://localhost", "sb://"+ln.Addr().String(), 1)
	start := time.Now()
	code, _, errs := ctlEnv(t, map[string]string{"SERVICEBUS_CONNECTION_STRING": cs}, "parked", "list")
	if code != exitError || !strings.Contains(errs, "Service Bus emulator") {
		t.Errorf("exit %d, stderr %q; want a failure that names the emulator", code, errs)
	}
	if took := time.Since(start); took > 3*opTimeout {
		t.Errorf("took %s, want it to end within its deadline of %s per call", took, opTimeout)
	}
	select {
	case head := <-heard:
		if !bytes.Equal(head, []byte("AMQP")) {
			t.Errorf("the emulator's port heard %q, want the AMQP header in the clear", head)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing connected to the port the connection string names")
	}
}

// What the SDK refuses, and a connection string that is not the
// emulator's, are usage errors: nothing is dialled.
func TestConnectionStringRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"emulator with an https endpoint": {[]string{"--connection-string", "Endpoint=https://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true"}, "sb://"},
		"no key":                          {[]string{"--connection-string", "Endpoint=sb://localhost;UseDevelopmentEmulator=true"}, "SharedAccessKeyName"},
		"an Azure key":                    {[]string{"--connection-string", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v"}, "Microsoft Entra ID"},
		"both ways at once":               {[]string{"--connection-string", emulatorConnectionString, "--namespace", testNamespace}, "not both"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errs := ctl(t, append([]string{"parked", "list"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, errs, exitUsage, tc.want)
			}
		})
	}
}

// send says where the message goes in the emulator's mode.
func TestSendToTheEmulator(t *testing.T) {
	code, out, errs := ctl(t, "send", "--connection-string", emulatorConnectionString, "--dry-run", "../../bicep/deploy/sample-order.json")
	if code != exitOK || !strings.Contains(out, "would send to orders in the Service Bus emulator") {
		t.Errorf("exit %d (%s)\n%s", code, errs, out)
	}
}
