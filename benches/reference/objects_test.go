package reference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

const quickstart = "../../examples/quickstart"

func TestDocumentsSplitsAtSeparatorLinesOnly(t *testing.T) {
	text := "# header only\n---\na: 1\nb: '---'\n--- \nc: 2\n---\n"
	documents, err := Documents([]byte(text))
	must(t, err)
	got := make([]string, len(documents))
	for i, d := range documents {
		got[i] = string(d)
	}
	want := `{"a":1,"b":"---"}|{"c":2}`
	if strings.Join(got, "|") != want {
		t.Fatalf("documents = %q, want %q", got, want)
	}
}

func TestDocumentsNamesTheBrokenDocument(t *testing.T) {
	_, err := Documents([]byte("a: 1\n---\na: [\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "document 2:") {
		t.Fatalf("error = %v, want one naming document 2", err)
	}
}

// The quickstart as `serve --objects` reads it: its class reconciled from its inline variables.
func TestLoadObjectsReadsTheQuickstart(t *testing.T) {
	objects, err := LoadObjects(quickstart)
	must(t, err)
	if len(objects.Classes) != 1 || len(objects.Clusters) != 2 {
		t.Fatalf("read %d ClusterClasses and %d Clusters, want 1 and 2", len(objects.Classes), len(objects.Clusters))
	}
	class := objects.Classes[0]
	if !conditions.IsTrue(class, clusterv1.ClusterClassVariablesReadyCondition) {
		t.Fatal("class not marked VariablesReady")
	}
	var names []string
	for _, variable := range class.Status.Variables {
		names = append(names, variable.Name)
		if variable.Definitions[0].From != clusterv1.VariableDefinitionFromInline {
			t.Fatalf("variable %s comes from %q", variable.Name, variable.Definitions[0].From)
		}
	}
	if got := strings.Join(names, ","); got != "etcd,imageRepository,kubeletLogLevel,nodeLabels,preLoadImages" {
		t.Fatalf("status variables = %s", got)
	}
}

func TestLoadObjectsNamesTheBrokenFile(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("kind: [\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("kind: [\n"), 0o600))
	_, err := LoadObjects(dir)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml: document 1:") {
		t.Fatalf("error = %v, want one naming bad.yaml", err)
	}
}

func TestMarkReconciledRefusesDiscoveredVariables(t *testing.T) {
	extension := "discover.my-extension"
	class := &clusterv1.ClusterClass{}
	class.Name = "external"
	class.Spec.Patches = []clusterv1.ClusterClassPatch{{
		Name:     "lb",
		External: &clusterv1.ExternalPatchDefinition{DiscoverVariablesExtension: extension},
	}}
	err := MarkReconciled(class)
	if err == nil || !strings.Contains(err.Error(), `patch "lb" discovers variables`) {
		t.Fatalf("error = %v", err)
	}
}

// The review benches/compare-tls.sh posts (the quickstart's dev Cluster) is admitted by the
// reference with its variables defaulted.
func TestQuickstartClusterIsDefaulted(t *testing.T) {
	objects, err := LoadObjects(quickstart)
	must(t, err)
	server, err := NewServer(webhook.Options{}, objects.Classes, objects.Clusters)
	must(t, err)
	text, err := os.ReadFile(filepath.Join(quickstart, "10-cluster-dev.yaml"))
	must(t, err)
	documents, err := Documents(text)
	must(t, err)
	hub, err := Hub(documents[0])
	must(t, err)
	body, err := Review("Cluster", "clusters", "CREATE", hub, nil)
	must(t, err)
	response := admitted(t, post(server.WebhookMux(), MutateCluster, body))
	patch, err := jsonpatch.DecodePatch(response.Patch)
	must(t, err)
	defaulted, err := patch.Apply(hub)
	must(t, err)
	cluster, err := Decode[clusterv1.Cluster](defaulted)
	must(t, err)
	if cluster.Spec.Topology.Version != "v1.31.2" || len(cluster.Spec.Topology.Variables) != 4 {
		t.Fatalf("defaulted topology: version %s, %d variables; want v1.31.2 and 4",
			cluster.Spec.Topology.Version, len(cluster.Spec.Topology.Variables))
	}
}
