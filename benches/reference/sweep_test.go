package reference

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// admissionFixtures is tests/fixtures/admission, from this directory.
const admissionFixtures = "../../tests/fixtures/admission"

// Verdicts of the sweep, in the order its summary prints them.
const (
	agree         = "agree"
	differVerdict = "differ (verdict)"
	differWording = "differ (wording)"
	notApplicable = "not applicable"
)

// TestSweep is a tool, not a check: it runs every admission fixture through the reference's
// webhooks as the API server would (admitAsAPIServer), prints the reference's verdict and causes
// beside the fixture's `expect`, and ends with a summary line. Fixtures listed in README.md's
// "Not applicable" table are run and printed but counted apart, with their reason. Skipped
// unless SWEEP is set; SWEEP=1 runs every fixture, any other value only the fixtures whose path
// contains it; SWEEP_FIXTURES names another fixture directory (an older tree's, to compare):
//
//	SWEEP=1 go test -run TestSweep -v .
func TestSweep(t *testing.T) {
	filter := os.Getenv("SWEEP")
	if filter == "" {
		t.Skip("SWEEP not set")
	}
	exempt, err := notApplicableTable("README.md")
	must(t, err)
	root := os.Getenv("SWEEP_FIXTURES")
	if root == "" {
		root = admissionFixtures
	}
	var paths []string
	must(t, filepath.WalkDir(root, func(path string, entry os.DirEntry, err error) error {
		if err == nil && !entry.IsDir() && strings.HasSuffix(path, ".yaml") {
			paths = append(paths, path)
		}
		return err
	}))
	sort.Strings(paths)
	counts := map[string]int{}
	for _, path := range paths {
		name, _ := filepath.Rel(root, path)
		if filter != "1" && !strings.Contains(name, filter) {
			continue
		}
		fx, ok, err := loadAdmissionFixture(path)
		must(t, err)
		if !ok {
			continue
		}
		verdict, report := sweepOne(fx)
		if reason, listed := exempt.lookup(name); listed {
			verdict, report = notApplicable, append(report, "not applicable: "+reason)
		}
		counts[verdict]++
		fmt.Printf("== %s: %s\n   %s\n", name, verdict, fx.Description)
		for _, line := range report {
			fmt.Printf("   %s\n", line)
		}
	}
	fmt.Printf("sweep: %d fixtures: %d %s, %d %s, %d %s, %d %s\n",
		counts[agree]+counts[differVerdict]+counts[differWording]+counts[notApplicable],
		counts[agree], agree, counts[differVerdict], differVerdict,
		counts[differWording], differWording, counts[notApplicable], notApplicable)
}

// sweepOne runs one fixture and compares the reference's outcome with its `expect`: the
// verdict, then the causes (field, type, message, in order), the code, the message fragment,
// the warnings and the mutated object, each only when the fixture states it.
func sweepOne(fx *admissionFixture) (string, []string) {
	gvk, err := fx.kind()
	if err != nil {
		return differVerdict, []string{"fixture: " + err.Error()}
	}
	server, skipped, err := fixtureServer(fx)
	if err != nil {
		return notApplicable, []string{"reference cannot read the objects: " + err.Error()}
	}
	result, err := admitAsAPIServer(server.WebhookMux(), fx, gvk)
	if err != nil {
		return notApplicable, []string{"reference: " + err.Error()}
	}
	var report []string
	if len(skipped) > 0 {
		report = append(report, fmt.Sprintf("objects the reference cannot read: %v", skipped))
	}
	report = append(report, describeOutcome(result)...)
	report = append(report, describeExpect(fx)...)
	if result.Allowed != fx.Expect.Allowed {
		return differVerdict, report
	}
	var differences []string
	var causes []cause
	if result.Denied != nil {
		causes = distinct(causesOf(result.Denied.Response))
		code := fx.Expect.Code
		if code == 0 && len(fx.Expect.Causes) > 0 {
			code = 422
		}
		if got := result.Denied.Response.Result.Code; code != 0 && got != code {
			differences = append(differences, fmt.Sprintf("code %d, expected %d", got, code))
		}
		message := result.Denied.Response.Result.Message
		if fx.Expect.MessageContains != "" && !strings.Contains(message, fx.Expect.MessageContains) {
			differences = append(differences, fmt.Sprintf("message lacks %q", fx.Expect.MessageContains))
		}
	}
	if !reflect.DeepEqual(causes, fx.Expect.Causes) && len(causes)+len(fx.Expect.Causes) > 0 {
		differences = append(differences, "causes differ")
	}
	if fx.Expect.Warnings != nil && !sameStrings(result.Warnings, fx.Expect.Warnings) {
		differences = append(differences, "warnings differ")
	}
	if fx.Expect.Patch != nil && result.Allowed {
		same, err := samePatchedObject(fx, result.Patch)
		if err != nil {
			differences = append(differences, "patch: "+err.Error())
		} else if !same {
			differences = append(differences, "mutated object differs")
		}
	}
	if len(differences) > 0 {
		return differWording, append(report, "differences: "+strings.Join(differences, "; "))
	}
	return agree, report
}

// describeOutcome prints each webhook's answer: verdict, code, causes, warnings, patch.
func describeOutcome(result *outcome) []string {
	var lines []string
	for _, a := range result.Answers {
		r := a.Response
		line := fmt.Sprintf("reference %s: allowed=%v", a.Webhook, r.Allowed)
		if !r.Allowed && r.Result != nil {
			line += fmt.Sprintf(" code=%d message=%q", r.Result.Code, r.Result.Message)
		}
		lines = append(lines, line)
		for _, c := range causesOf(r) {
			lines = append(lines, fmt.Sprintf("  - %s %s: %s", c.Field, c.Type, c.Message))
		}
		if len(r.Warnings) > 0 {
			lines = append(lines, fmt.Sprintf("  warnings: %q", r.Warnings))
		}
		if len(r.Patch) > 0 {
			lines = append(lines, fmt.Sprintf("  patch: %s", r.Patch))
		}
	}
	return lines
}

// describeExpect prints the fixture's expect in the same shape.
func describeExpect(fx *admissionFixture) []string {
	e := fx.Expect
	line := fmt.Sprintf("expect: allowed=%v", e.Allowed)
	if e.Code != 0 {
		line += fmt.Sprintf(" code=%d", e.Code)
	}
	if e.MessageContains != "" {
		line += fmt.Sprintf(" messageContains=%q", e.MessageContains)
	}
	lines := []string{line}
	for _, c := range e.Causes {
		lines = append(lines, fmt.Sprintf("  - %s %s: %s", c.Field, c.Type, c.Message))
	}
	if e.Warnings != nil {
		lines = append(lines, fmt.Sprintf("  warnings: %q", e.Warnings))
	}
	if e.Patch != nil {
		lines = append(lines, fmt.Sprintf("  patch: %s", e.Patch))
	}
	return lines
}

// distinct drops repeated causes, keeping the first of each: the reference's Cluster
// defaulting webhook reports a variable's error once from defaulting and again from validation
// (DefaultAndValidateVariables appends both lists), which the sweep does not count as a
// difference.
func distinct(causes []cause) []cause {
	seen := map[cause]bool{}
	var kept []cause
	for _, c := range causes {
		if !seen[c] {
			seen[c] = true
			kept = append(kept, c)
		}
	}
	return kept
}

// sameStrings compares two lists of warnings, an empty list equal to none.
func sameStrings(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// samePatchedObject applies the fixture's expected patch and the reference's patch to the
// fixture's object and compares the results as the reference's typed object (a round trip
// through its Go type: the empty status and zero-valued structs its encoder writes are not
// differences a client sees).
func samePatchedObject(fx *admissionFixture, reference []byte) (bool, error) {
	expected, err := json.Marshal(fx.Expect.Patch)
	if err != nil {
		return false, err
	}
	// The fixture's patch is about the object it sends; the reference's about that object at
	// v1beta2: both are compared at v1beta2.
	ours, err := applyPatch(fx.Object, expected)
	if err != nil {
		return false, err
	}
	if ours, err = Hub(ours); err != nil {
		return false, err
	}
	hub, err := Hub(fx.Object)
	if err != nil {
		return false, err
	}
	theirs, err := applyPatch(hub, reference)
	if err != nil {
		return false, err
	}
	scheme, err := Scheme()
	if err != nil {
		return false, err
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	typed := func(raw []byte) (any, error) {
		object, _, err := decoder.Decode(raw, nil, nil)
		if err != nil {
			return nil, err
		}
		encoded, err := json.Marshal(object)
		if err != nil {
			return nil, err
		}
		var generic any
		if err := json.Unmarshal(encoded, &generic); err != nil {
			return nil, err
		}
		return generic, nil
	}
	a, err := typed(ours)
	if err != nil {
		return false, err
	}
	b, err := typed(theirs)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(a, b), nil
}

// exemptions maps fixture paths (or path patterns, as filepath.Match reads them) relative to
// tests/fixtures/admission to the reason they are not compared.
type exemptions map[string]string

// lookup returns the reason a fixture is not applicable, if it is listed.
func (e exemptions) lookup(name string) (string, bool) {
	for pattern, reason := range e {
		if matched, _ := filepath.Match(pattern, name); matched {
			return reason, true
		}
	}
	return "", false
}

// notApplicableTable reads the rows of the "Not applicable" table of the sweep's README:
// "| `fixture or pattern` | reason |".
func notApplicableTable(path string) (exemptions, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	table := exemptions{}
	inSection := false
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "#") {
			inSection = strings.Contains(strings.ToLower(line), "not applicable")
			continue
		}
		if !inSection || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) < 2 {
			return nil, fmt.Errorf("%s: a row needs a fixture and a reason: %s", path, line)
		}
		table[strings.Trim(strings.TrimSpace(cells[0]), "`")] = strings.TrimSpace(strings.Join(cells[1:], "|"))
	}
	return table, lines.Err()
}
