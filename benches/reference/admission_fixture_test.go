package reference

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/cluster-api/util/index"
)

// admissionFixture is one file of tests/fixtures/admission: the request (webhook path,
// operation, object, old object), the objects stored beside it, and what capi-topology answers.
type admissionFixture struct {
	Description string            `json:"description"`
	Path        string            `json:"path"`
	Operation   string            `json:"operation"`
	Objects     []json.RawMessage `json:"objects"`
	From        []string          `json:"objectsFrom"`
	Object      json.RawMessage   `json:"object"`
	OldObject   json.RawMessage   `json:"oldObject"`
	Expect      struct {
		Allowed         bool            `json:"allowed"`
		Code            int32           `json:"code"`
		Causes          []cause         `json:"causes"`
		MessageContains string          `json:"messageContains"`
		Warnings        []string        `json:"warnings"`
		Patch           json.RawMessage `json:"patch"`
	} `json:"expect"`
}

// cause is one StatusCause, as the fixtures write it.
type cause struct {
	Field   string `json:"field"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// loadAdmissionFixture reads a fixture and the objects of its objectsFrom files; ok is false for
// a file that is not a request (the shared objects under common/).
func loadAdmissionFixture(path string) (fx *admissionFixture, ok bool, err error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	fx = &admissionFixture{}
	if err := yaml.Unmarshal(text, fx); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if fx.Path == "" {
		return nil, false, nil
	}
	for _, from := range fx.From {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), from))
		if err != nil {
			return nil, false, err
		}
		documents, err := Documents(raw)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", from, err)
		}
		for _, object := range documents {
			fx.Objects = append(fx.Objects, object)
		}
	}
	return fx, true, nil
}

// subject is the object the request is about (the old one for a DELETE).
func (fx *admissionFixture) subject() json.RawMessage {
	if fx.Object != nil {
		return fx.Object
	}
	return fx.OldObject
}

// kind returns the group, version and kind of the request's object.
func (fx *admissionFixture) kind() (schema.GroupVersionKind, error) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(fx.subject(), &meta); err != nil {
		return schema.GroupVersionKind{}, err
	}
	return schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind), nil
}

// fixtureServer returns the reference's webhook server reading the fixture's stored objects
// through controller-runtime's fake client (Clusters indexed by ClusterClass, as the manager
// indexes them). Objects of kinds the reference's scheme lacks are skipped and named.
func fixtureServer(fx *admissionFixture) (webhook.Server, []string, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, nil, err
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	var objects []client.Object
	var skipped []string
	for _, raw := range fx.Objects {
		// Stored as the API server stores them: v1beta1 objects converted to v1beta2.
		raw, err := Hub(raw)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		decoded, gvk, err := decoder.Decode(raw, nil, nil)
		if err != nil {
			if gvk != nil {
				skipped = append(skipped, gvk.Kind)
				continue
			}
			return nil, nil, err
		}
		if class, ok := decoded.(*clusterv1.ClusterClass); ok {
			MirrorV1Beta1Reconciled(class)
		}
		objects = append(objects, decoded.(client.Object))
	}
	objects = append(objects, providerCRDs(objects)...)
	reader := fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objects...).
		WithIndex(&clusterv1.Cluster{}, index.ClusterClassRefPath, index.ClusterByClusterClassRef).
		Build()
	server, err := NewServerReading(webhook.Options{}, reader)
	return server, skipped, err
}

// providerCRDs are the CRDs of the fixture's provider objects (those the scheme reads as
// unstructured, e.g. KubeadmControlPlane), labelled with the contract of the versions the fixture
// writes (`cluster.x-k8s.io/v1beta1: v1beta1` for a v1beta1 object): Cluster API v1.14 reads the
// label to turn a v1beta2 reference (apiGroup and kind) into an apiVersion.
func providerCRDs(objects []client.Object) []client.Object {
	versions := map[schema.GroupKind][]string{}
	for _, object := range objects {
		if _, ok := object.(*unstructured.Unstructured); !ok {
			continue
		}
		gvk := object.GetObjectKind().GroupVersionKind()
		versions[gvk.GroupKind()] = append(versions[gvk.GroupKind()], gvk.Version)
	}
	var crds []client.Object
	for gk, list := range versions {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		crd.Name = contract.CalculateCRDName(gk.Group, gk.Kind)
		crd.Labels = map[string]string{}
		for _, version := range list {
			crd.Labels[clusterv1.GroupVersion.Group+"/"+version] = version
		}
		crds = append(crds, crd)
	}
	return crds
}

// resourceOf names the resource of a kind (its plural, lower case).
func resourceOf(kind string) string {
	lower := strings.ToLower(kind)
	if strings.HasSuffix(lower, "s") {
		return lower + "es"
	}
	return lower + "s"
}

// answer is what one webhook said about a request.
type answer struct {
	Webhook  string
	Response *admissionv1.AdmissionResponse
}

// send posts one AdmissionReview to `path`; found is false when no webhook serves the path.
func send(handler http.Handler, path string, gvk schema.GroupVersionKind, operation string, object, old []byte) (*admissionv1.AdmissionResponse, bool, error) {
	body, err := Review(gvk.Kind, resourceOf(gvk.Kind), operation, object, old)
	if err != nil {
		return nil, false, err
	}
	request := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
	request.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, request)
	if recorder.Code == http.StatusNotFound {
		return nil, false, nil
	}
	review, err := Decode[admissionv1.AdmissionReview](recorder.Body.Bytes())
	if err != nil || review.Response == nil {
		return nil, true, fmt.Errorf("answer of %s is not an AdmissionReview (%v): %s", path, err, recorder.Body.Bytes())
	}
	return review.Response, true, nil
}

// webhookName is the name Cluster API's manifests give the webhook of a path (`default.` for
// mutating, `validation.` for validating, then the kind and the group), which the API server
// prints in `admission webhook "<name>" denied the request`.
func webhookName(path string, gvk schema.GroupVersionKind) string {
	role := "validation"
	if strings.HasPrefix(path, "/mutate-") {
		role = "default"
	}
	return fmt.Sprintf("%s.%s.%s", role, strings.ToLower(gvk.Kind), gvk.Group)
}

// outcome is the API server's answer to a request that passes through the kind's mutating
// webhook, then (unless it denied) its validating webhook with the mutated object.
type outcome struct {
	Answers  []answer
	Allowed  bool
	Denied   *answer
	Warnings []string
	Patch    []byte
}

// admitAsAPIServer runs a fixture's request as the API server runs the reference's webhooks:
// CREATE and UPDATE go to the mutating webhook first (when the kind has one) and a denial there
// ends the request; otherwise its patch is applied and the validating webhook decides.
//
// The webhooks are registered for v1beta2 with `matchPolicy: Equivalent`, so a v1beta1 (or
// v1alpha1) fixture is converted to v1beta2 first, object and old object, by Cluster API's own
// converters, and sent to the v1beta2 path of the fixture's webhook: the patch and the causes are
// about the v1beta2 object, as they are when the API server calls the webhook.
func admitAsAPIServer(handler http.Handler, fx *admissionFixture, gvk schema.GroupVersionKind) (*outcome, error) {
	validate := hubPath(strings.Replace(fx.Path, "/mutate-", "/validate-", 1))
	mutate := strings.Replace(validate, "/validate-", "/mutate-", 1)
	result := &outcome{Allowed: true}
	object, err := Hub(fx.Object)
	if err != nil {
		return nil, err
	}
	old, err := Hub(fx.OldObject)
	if err != nil {
		return nil, err
	}
	if fx.Operation != "DELETE" {
		response, found, err := send(handler, mutate, gvk, fx.Operation, object, old)
		if err != nil {
			return nil, err
		}
		if found {
			result.Answers = append(result.Answers, answer{webhookName(mutate, gvk), response})
			result.Warnings = append(result.Warnings, response.Warnings...)
			if !response.Allowed {
				result.Allowed, result.Denied = false, &result.Answers[len(result.Answers)-1]
				return result, nil
			}
			result.Patch = response.Patch
			if object, err = applyPatch(object, response.Patch); err != nil {
				return nil, err
			}
		}
	}
	response, found, err := send(handler, validate, gvk, fx.Operation, object, old)
	if err != nil {
		return nil, err
	}
	if found {
		result.Answers = append(result.Answers, answer{webhookName(validate, gvk), response})
		result.Warnings = append(result.Warnings, response.Warnings...)
		if !response.Allowed {
			result.Allowed, result.Denied = false, &result.Answers[len(result.Answers)-1]
		}
	}
	if len(result.Answers) == 0 {
		return nil, fmt.Errorf("the reference serves neither %s nor %s", mutate, validate)
	}
	return result, nil
}

// hubPath is the v1beta2 path of a webhook path a fixture names for v1beta1 (v1alpha1 for
// ExtensionConfig), as Cluster API v1.14.0 serves it.
func hubPath(path string) string {
	for _, spoke := range []string{"-v1beta1-", "-v1alpha1-"} {
		path = strings.Replace(path, spoke, "-v1beta2-", 1)
	}
	return path
}

// applyPatch applies a JSONPatch (none when empty) to a JSON document.
func applyPatch(document, patch []byte) ([]byte, error) {
	if len(patch) == 0 || document == nil {
		return document, nil
	}
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	return decoded.Apply(document)
}

// causesOf lists a response's causes as the fixtures write them.
func causesOf(response *admissionv1.AdmissionResponse) []cause {
	if response.Result == nil || response.Result.Details == nil {
		return nil
	}
	causes := make([]cause, 0, len(response.Result.Details.Causes))
	for _, c := range response.Result.Details.Causes {
		causes = append(causes, cause{c.Field, string(c.Type), c.Message})
	}
	return causes
}
