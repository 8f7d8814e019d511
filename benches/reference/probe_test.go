package reference

import (
	"fmt"
	"os"
	"testing"
)

// TestProbe is a tool, not a check: it sends the request of one admission fixture of
// tests/fixtures/admission (its path, operation, objects, objectsFrom, object and oldObject) to
// the reference's webhooks as the API server would (mutating, then validating; see
// admitAsAPIServer) and prints each answer's causes, warnings and patch, to confirm what a
// fixture expects. Skipped unless PROBE names the fixture:
//
//	PROBE=$PWD/../../tests/fixtures/admission/clusterclass/x.yaml go test -run TestProbe -v .
//
// (with the environment of benches/compare.sh). TestSweep runs every fixture.
func TestProbe(t *testing.T) {
	path := os.Getenv("PROBE")
	if path == "" {
		t.Skip("PROBE not set")
	}
	fx, ok, err := loadAdmissionFixture(path)
	must(t, err)
	if !ok {
		t.Fatalf("%s is not a request (no path)", path)
	}
	gvk, err := fx.kind()
	must(t, err)
	server, skipped, err := fixtureServer(fx)
	must(t, err)
	if len(skipped) > 0 {
		fmt.Printf("objects the reference cannot read: %v\n", skipped)
	}
	result, err := admitAsAPIServer(server.WebhookMux(), fx, gvk)
	must(t, err)
	for _, a := range result.Answers {
		r := a.Response
		fmt.Printf("webhook: %s\nallowed: %v\n", a.Webhook, r.Allowed)
		if r.Result != nil && r.Result.Message != "" {
			fmt.Printf("code: %d\nmessage: %s\n", r.Result.Code, r.Result.Message)
		}
		for _, c := range causesOf(r) {
			fmt.Printf("- field: %s\n  type: %s\n  message: %s\n", c.Field, c.Type, c.Message)
		}
		fmt.Printf("warnings: %q\npatch: %s\n", r.Warnings, r.Patch)
	}
}
