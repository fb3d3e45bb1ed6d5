package sidecar_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// The real sidecar, told (test-only) to report another protocolVersion in its initialize answer.
func reportingProtocol(version string) []string {
	return append(os.Environ(), "SIDECAR_TEST_REPORT_PROTOCOL_VERSION="+version)
}

func TestASidecarOfAnotherProtocolMajorIsRefusedNamingBothVersions(t *testing.T) {
	client, err := sidecar.Start(testContext(t), sidecar.Options{
		Command: sidecarCommand(t),
		Root:    t.TempDir(),
		Env:     reportingProtocol("2.0"),
	})
	if err == nil {
		client.Close()
		t.Fatal("Start accepted a sidecar that speaks protocol 2.0")
	}
	var versionErr *sidecar.ProtocolVersionError
	if !errors.As(err, &versionErr) {
		t.Fatalf("Start: %T %v, want *ProtocolVersionError", err, err)
	}
	if versionErr.Server != "2.0" || versionErr.Client != sidecar.ProtocolVersion {
		t.Fatalf("versions %q / %q", versionErr.Server, versionErr.Client)
	}
	if !strings.Contains(err.Error(), "speaks protocol 2.0 but this client speaks 1.0") {
		t.Fatalf("message does not name both versions: %v", err)
	}
}

func TestANewerMinorOfTheSameMajorIsAccepted(t *testing.T) {
	client, _ := start(t, sidecar.Options{Env: reportingProtocol("1.7")})
	if got := client.InitializeResult().ProtocolVersion; got != "1.7" {
		t.Fatalf("protocolVersion %q", got)
	}
}
