package main

// The lifecycle hooks and GenerateUpgradePlan, served when --control-dir is given, with answers
// the test controls through two files in that directory:
//   - answers.json (the test writes it, atomically): {"<Hook>": {"status": "Success"|"Failure",
//     "message": "...", "retryAfterSeconds": N}, "<Hook>/<id>": {...}, "GenerateUpgradePlan":
//     {"controlPlaneUpgrades": [{"version": "v1.34.0"}], "workersUpgrades": [...]}}; "<id>" is the
//     ExtensionConfig's setting "id", so that two ExtensionConfigs of this server answer
//     differently. A hook without an entry answers Success; read on every call.
//   - calls.jsonl (this server appends): one line per call, in the order received:
//     {"hook", "id", "cluster": "<namespace>/<name>", "from", "to", "version"}.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apimachinery/pkg/util/version"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/cluster-api/exp/runtime/server"
)

// answer is what the test asks a hook to answer.
type answer struct {
	Status            runtimehooksv1.ResponseStatus `json:"status,omitempty"`
	Message           string                        `json:"message,omitempty"`
	RetryAfterSeconds int32                         `json:"retryAfterSeconds,omitempty"`
}

// call is one recorded call.
type call struct {
	Hook    string `json:"hook"`
	ID      string `json:"id,omitempty"`
	Cluster string `json:"cluster"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Version string `json:"version,omitempty"`
}

// control reads the answers and records the calls.
type control struct {
	dir string
	mu  sync.Mutex
}

// requestFields are the fields of every lifecycle (and plan) request that a call records.
type requestFields struct {
	Settings map[string]string `json:"settings"`
	Cluster  struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	} `json:"cluster"`
	From             string `json:"fromKubernetesVersion"`
	To               string `json:"toKubernetesVersion"`
	Version          string `json:"kubernetesVersion"`
	FromControlPlane string `json:"fromControlPlaneKubernetesVersion"`
}

// record appends the call of hook with request to calls.jsonl and returns its id setting.
func (c *control) record(hook string, request any) (string, error) {
	raw, err := json.Marshal(request)
	if err != nil {
		return "", err
	}
	var fields requestFields
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", err
	}
	from := fields.From
	if from == "" {
		from = fields.FromControlPlane
	}
	entry := call{
		Hook:    hook,
		ID:      fields.Settings["id"],
		Cluster: fields.Cluster.Metadata.Namespace + "/" + fields.Cluster.Metadata.Name,
		From:    from,
		To:      fields.To,
		Version: fields.Version,
	}
	line, err := json.Marshal(entry)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	file, err := os.OpenFile(filepath.Join(c.dir, "calls.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	defer file.Close()
	writer := bufio.NewWriter(file)
	if _, err := writer.Write(append(line, '\n')); err != nil {
		return "", err
	}
	return entry.ID, writer.Flush()
}

// answers reads answers.json; a missing file is no answers.
func (c *control) answers() (map[string]json.RawMessage, error) {
	raw, err := os.ReadFile(filepath.Join(c.dir, "answers.json"))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, err
	}
	all := map[string]json.RawMessage{}
	return all, json.Unmarshal(raw, &all)
}

// lookup decodes the answer of hook for id (the id's own, else the hook's) into out; false when
// there is none.
func (c *control) lookup(hook, id string, out any) (bool, error) {
	all, err := c.answers()
	if err != nil {
		return false, err
	}
	raw, ok := all[hook+"/"+id]
	if !ok || id == "" {
		raw, ok = all[hook]
	}
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, out)
}

// lifecycle is the handler of one lifecycle hook: records the call, answers as answers.json says.
func lifecycle[Req runtimehooksv1.RequestObject, Resp runtimehooksv1.ResponseObject](c *control, hook string) func(context.Context, Req, Resp) {
	return func(_ context.Context, req Req, resp Resp) {
		resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
		id, err := c.record(hook, req)
		var configured answer
		if err == nil {
			_, err = c.lookup(hook, id, &configured)
		}
		if err != nil {
			resp.SetStatus(runtimehooksv1.ResponseStatusFailure)
			resp.SetMessage(fmt.Sprintf("test extension: %v", err))
			return
		}
		if configured.Status != "" {
			resp.SetStatus(configured.Status)
		}
		resp.SetMessage(configured.Message)
		if retry, ok := any(resp).(runtimehooksv1.RetryResponseObject); ok {
			retry.SetRetryAfterSeconds(configured.RetryAfterSeconds)
		}
	}
}

// generateUpgradePlan answers the plan answers.json gives, or fails without one.
func generateUpgradePlan(c *control) func(context.Context, *runtimehooksv1.GenerateUpgradePlanRequest, *runtimehooksv1.GenerateUpgradePlanResponse) {
	return func(_ context.Context, req *runtimehooksv1.GenerateUpgradePlanRequest, resp *runtimehooksv1.GenerateUpgradePlanResponse) {
		resp.Status = runtimehooksv1.ResponseStatusSuccess
		id, err := c.record("GenerateUpgradePlan", req)
		found := false
		if err == nil {
			found, err = c.lookup("GenerateUpgradePlan", id, resp)
		}
		if err == nil && !found {
			err = fmt.Errorf("no plan in answers.json")
		}
		if err == nil {
			// As a real extension plans: only the steps ahead of where the Cluster is now.
			resp.ControlPlaneUpgrades, err = ahead(resp.ControlPlaneUpgrades, req.FromControlPlaneKubernetesVersion)
		}
		if err == nil {
			resp.WorkersUpgrades, err = ahead(resp.WorkersUpgrades, req.FromWorkersKubernetesVersion)
		}
		if err != nil {
			resp.Status = runtimehooksv1.ResponseStatusFailure
			resp.Message = fmt.Sprintf("test extension: %v", err)
		}
	}
}

// ahead keeps the steps of a configured plan above version from (all of them when from is empty).
func ahead(steps []runtimehooksv1.UpgradeStep, from string) ([]runtimehooksv1.UpgradeStep, error) {
	if from == "" {
		return steps, nil
	}
	current, err := version.ParseSemantic(from)
	if err != nil {
		return nil, fmt.Errorf("from version %q: %w", from, err)
	}
	var kept []runtimehooksv1.UpgradeStep
	for _, step := range steps {
		target, err := version.ParseSemantic(step.Version)
		if err != nil {
			return nil, fmt.Errorf("configured step %q: %w", step.Version, err)
		}
		if target.GreaterThan(current) {
			kept = append(kept, step)
		}
	}
	return kept, nil
}

// lifecycleHandlers are the handlers served with --control-dir.
func lifecycleHandlers(c *control) []server.ExtensionHandler {
	return []server.ExtensionHandler{
		{Hook: runtimehooksv1.BeforeClusterCreate, Name: "before-cluster-create",
			HandlerFunc: lifecycle[*runtimehooksv1.BeforeClusterCreateRequest, *runtimehooksv1.BeforeClusterCreateResponse](c, "BeforeClusterCreate")},
		{Hook: runtimehooksv1.AfterControlPlaneInitialized, Name: "after-control-plane-initialized",
			HandlerFunc: lifecycle[*runtimehooksv1.AfterControlPlaneInitializedRequest, *runtimehooksv1.AfterControlPlaneInitializedResponse](c, "AfterControlPlaneInitialized")},
		{Hook: runtimehooksv1.BeforeClusterUpgrade, Name: "before-cluster-upgrade",
			HandlerFunc: lifecycle[*runtimehooksv1.BeforeClusterUpgradeRequest, *runtimehooksv1.BeforeClusterUpgradeResponse](c, "BeforeClusterUpgrade")},
		{Hook: runtimehooksv1.BeforeControlPlaneUpgrade, Name: "before-control-plane-upgrade",
			HandlerFunc: lifecycle[*runtimehooksv1.BeforeControlPlaneUpgradeRequest, *runtimehooksv1.BeforeControlPlaneUpgradeResponse](c, "BeforeControlPlaneUpgrade")},
		{Hook: runtimehooksv1.AfterControlPlaneUpgrade, Name: "after-control-plane-upgrade",
			HandlerFunc: lifecycle[*runtimehooksv1.AfterControlPlaneUpgradeRequest, *runtimehooksv1.AfterControlPlaneUpgradeResponse](c, "AfterControlPlaneUpgrade")},
		{Hook: runtimehooksv1.BeforeWorkersUpgrade, Name: "before-workers-upgrade",
			HandlerFunc: lifecycle[*runtimehooksv1.BeforeWorkersUpgradeRequest, *runtimehooksv1.BeforeWorkersUpgradeResponse](c, "BeforeWorkersUpgrade")},
		{Hook: runtimehooksv1.AfterWorkersUpgrade, Name: "after-workers-upgrade",
			HandlerFunc: lifecycle[*runtimehooksv1.AfterWorkersUpgradeRequest, *runtimehooksv1.AfterWorkersUpgradeResponse](c, "AfterWorkersUpgrade")},
		{Hook: runtimehooksv1.AfterClusterUpgrade, Name: "after-cluster-upgrade",
			HandlerFunc: lifecycle[*runtimehooksv1.AfterClusterUpgradeRequest, *runtimehooksv1.AfterClusterUpgradeResponse](c, "AfterClusterUpgrade")},
		{Hook: runtimehooksv1.BeforeClusterDelete, Name: "before-cluster-delete",
			HandlerFunc: lifecycle[*runtimehooksv1.BeforeClusterDeleteRequest, *runtimehooksv1.BeforeClusterDeleteResponse](c, "BeforeClusterDelete")},
		{Hook: runtimehooksv1.GenerateUpgradePlan, Name: "generate-upgrade-plan",
			HandlerFunc: generateUpgradePlan(c)},
	}
}
