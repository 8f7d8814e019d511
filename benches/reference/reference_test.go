package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

const fixtures = "../fixtures"

// post sends one AdmissionReview to the server's mux and returns the bytes it answers.
func post(handler http.Handler, path string, body []byte) []byte {
	request := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	request.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, request)
	return recorder.Body.Bytes()
}

// admitted decodes an answer and fails unless the request was allowed.
func admitted(tb testing.TB, answer []byte) *admissionv1.AdmissionResponse {
	tb.Helper()
	review, err := Decode[admissionv1.AdmissionReview](answer)
	if err != nil || review.Response == nil {
		tb.Fatalf("answer is not an AdmissionReview (%v): %s", err, answer)
	}
	if !review.Response.Allowed {
		tb.Fatalf("benchmark input must be admitted: %s", review.Response.Result.Message)
	}
	return review.Response
}

// clusterCreate is the Cluster CREATE of benches/admission.rs: the mutating webhook's review, and
// the validating webhook's review of the object as the mutating webhook's patch leaves it.
func clusterCreate(tb testing.TB) (handler http.Handler, mutate, validate []byte) {
	tb.Helper()
	classJSON, err := Fixture(fixtures, "class-20-variables.yaml")
	must(tb, err)
	class, err := Decode[clusterv1.ClusterClass](classJSON)
	must(tb, err)
	// The fixture's v1beta1 status (VariablesReconciled) converts to status.deprecated; the
	// v1.14 Cluster webhook waits for VariablesReady.
	must(tb, MarkReconciled(class))
	server, err := NewServer(webhook.Options{}, []*clusterv1.ClusterClass{class}, nil)
	must(tb, err)
	handler = server.WebhookMux()
	cluster, err := Fixture(fixtures, "cluster-20-variables.yaml")
	must(tb, err)
	mutate, err = Review("Cluster", "clusters", "CREATE", cluster, nil)
	must(tb, err)
	response := admitted(tb, post(handler, MutateCluster, mutate))
	patch, err := jsonpatch.DecodePatch(response.Patch)
	must(tb, err)
	defaulted, err := patch.Apply(cluster)
	must(tb, err)
	validate, err = Review("Cluster", "clusters", "CREATE", defaulted, nil)
	must(tb, err)
	admitted(tb, post(handler, ValidateCluster, validate))
	return handler, mutate, validate
}

// classUpdate is the ClusterClass UPDATE of benches/admission.rs: one variable's maximum changed,
// with 1,000 Clusters (10 namespaces) using the class.
func classUpdate(tb testing.TB) (handler http.Handler, body []byte) {
	tb.Helper()
	classJSON, err := Fixture(fixtures, "class-20-variables.yaml")
	must(tb, err)
	class, err := Decode[clusterv1.ClusterClass](classJSON)
	must(tb, err)
	// The fixture's v1beta1 status (VariablesReconciled) converts to status.deprecated; the
	// v1.14 Cluster webhook waits for VariablesReady.
	must(tb, MarkReconciled(class))
	clusterJSON, err := Fixture(fixtures, "cluster-20-variables.yaml")
	must(tb, err)
	clusters := make([]*clusterv1.Cluster, 1000)
	for i := range clusters {
		clusters[i], err = Decode[clusterv1.Cluster](clusterJSON)
		must(tb, err)
		clusters[i].Name = fmt.Sprintf("bench-%d", i)
		clusters[i].Namespace = fmt.Sprintf("team-%d", i%10)
		clusters[i].Spec.Topology.ClassRef.Namespace = "default"
	}
	server, err := NewServer(webhook.Options{}, []*clusterv1.ClusterClass{class}, clusters)
	must(tb, err)
	var updated map[string]any
	must(tb, json.Unmarshal(classJSON, &updated))
	variable := updated["spec"].(map[string]any)["variables"].([]any)[6].(map[string]any)
	variable["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["maximum"] = 2000
	updatedJSON, err := json.Marshal(updated)
	must(tb, err)
	body, err = Review("ClusterClass", "clusterclasses", "UPDATE", updatedJSON, classJSON)
	must(tb, err)
	handler = server.WebhookMux()
	admitted(tb, post(handler, ValidateClusterClass, body))
	return handler, body
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// TestWorkloadsAreAdmitted keeps a broken setup from passing for a fast one.
func TestWorkloadsAreAdmitted(t *testing.T) {
	clusterCreate(t)
	classUpdate(t)
}

// BenchmarkClusterCreateMutateValidate20Vars5MDs is cluster_create_mutate_validate_20_vars_5_mds:
// bytes in, AdmissionReview bytes out, through the mutating and then the validating webhook.
func BenchmarkClusterCreateMutateValidate20Vars5MDs(b *testing.B) {
	handler, mutate, validate := clusterCreate(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		post(handler, MutateCluster, mutate)
		post(handler, ValidateCluster, validate)
	}
}

// BenchmarkClusterClassUpdate1000Clusters is clusterclass_update_1000_clusters.
func BenchmarkClusterClassUpdate1000Clusters(b *testing.B) {
	handler, body := classUpdate(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		post(handler, ValidateClusterClass, body)
	}
}

// BenchmarkClusterCreateMutateValidate20Vars5MDsV1beta1 is
// cluster_create_mutate_validate_20_vars_5_mds_v1beta1: the same Cluster written in v1beta1, as
// the API server admits it with the reference's webhooks registered at v1beta2 (`matchPolicy:
// Equivalent`): the object converted to v1beta2 by Cluster API's own conversion (in process here;
// an HTTPS call to the conversion webhook in a cluster), the review built, then both webhooks.
func BenchmarkClusterCreateMutateValidate20Vars5MDsV1beta1(b *testing.B) {
	handler, _, validate := clusterCreate(b)
	text, err := os.ReadFile(filepath.Join(fixtures, "cluster-20-variables.yaml"))
	must(b, err)
	spoke, err := yaml.YAMLToJSON(text)
	must(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		hub, err := Hub(spoke)
		must(b, err)
		mutate, err := Review("Cluster", "clusters", "CREATE", hub, nil)
		must(b, err)
		post(handler, MutateCluster, mutate)
		post(handler, ValidateCluster, validate)
	}
}
