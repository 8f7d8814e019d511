"""Records what kube-apiserver answers for each rule of the CEL cost table.

Usage: python3 scripts/cel-cost-reference.py [BIN_DIR]
  BIN_DIR: where etcd and kube-apiserver are (default: the e2e cache,
  ~/.cache/capi-topology-e2e/k8s-v1.34.4-etcd-v3.6.16/bin, made by tests/e2e/build-binaries.sh).

Starts etcd and kube-apiserver in a temporary directory, then, for every row of
src/variables/cel/testdata/cost_reference.yaml, creates (dry run) a CustomResourceDefinition whose
`spec.v` is the row's schema, and writes back under `apiServer` the verdict and the field errors
(paths relative to the schema, written `schema`, as the unit test names them). For a rule the API
server admits, it also finds the rule's exact estimated cost: the same schema as the items of a
list with maxItems N multiplies the rule's cost by N, and N is chosen so that the total just passes
the 10,000,000 limit, where the refusal prints the factor with six decimals.
"""
import json
import os
import secrets
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

TABLE = os.path.join(os.path.dirname(__file__), "..", "src", "variables", "cel", "testdata", "cost_reference.yaml")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/capi-topology-e2e/k8s-v1.34.4-etcd-v3.6.16/bin")
LIMIT = 10_000_000
PREFIX = "spec.validation.openAPIV3Schema"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(what, check, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit(f"{what} did not become ready")


class ApiServer:
    def __init__(self, run):
        self.run = run
        etcd_port, peer, self.port = free_port(), free_port(), free_port()
        self.token = secrets.token_hex(16)
        logs = open(os.path.join(run, "log"), "w")
        self.etcd = subprocess.Popen([
            os.path.join(BIN, "etcd"), "--name=ref", f"--data-dir={run}/etcd",
            f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
            f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=ref=http://127.0.0.1:{peer}",
            "--listen-metrics-urls=", "--unsafe-no-fsync", "--log-level=warn"], stdout=logs, stderr=logs)
        wait("etcd", lambda: b"true" in urllib.request.urlopen(f"http://127.0.0.1:{etcd_port}/health").read())
        certs = os.path.join(run, "certs")
        os.makedirs(certs)
        subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{certs}/sa.key"], check=True)
        with open(f"{certs}/tokens.csv", "w") as f:
            f.write(f"{self.token},admin,admin,system:masters\n")
        self.apiserver = subprocess.Popen([
            os.path.join(BIN, "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            f"--cert-dir={certs}", f"--secure-port={self.port}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-issuer=https://127.0.0.1:{self.port}",
            f"--service-account-key-file={certs}/sa.key", f"--service-account-signing-key-file={certs}/sa.key",
            f"--token-auth-file={certs}/tokens.csv", "--authorization-mode=RBAC",
            "--disable-admission-plugins=ServiceAccount", "--v=0"], stdout=logs, stderr=logs)
        self.tls = ssl.create_default_context()
        self.tls.check_hostname = False
        self.tls.verify_mode = ssl.CERT_NONE
        wait("kube-apiserver", lambda: self.request("GET", "/readyz")[0] == 200, 120)

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"https://127.0.0.1:{self.port}{path}", data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.tls) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def create(self, schema):
        """Creates (dry run) a CRD with `schema` at spec.v: None when admitted, else the errors."""
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "probes.cel.example.com"},
               "spec": {"group": "cel.example.com", "scope": "Namespaced",
                        "names": {"kind": "Probe", "plural": "probes"},
                        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                            "type": "object", "properties": {"spec": {"type": "object", "properties": {"v": schema}}}}}}]}}
        code, body = self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All", crd)
        if code == 201:
            return None
        status = json.loads(body)
        if code != 422:
            sys.exit(f"unexpected answer {code}: {status}")
        return [f"{relative(c['field'])}: {c['message']}" for c in status["details"]["causes"]]

    def stop(self):
        for process in (self.apiserver, self.etcd):
            process.terminate()
            process.wait()


def relative(path):
    for prefix in (PREFIX + ".properties[spec].properties[v]", PREFIX):
        if path.startswith(prefix):
            return "schema" + path[len(prefix):]
    return path


def factor(errors):
    """The factor of a per-rule cost refusal of `x-kubernetes-validations[0].rule` of the items, as
    (value, decimals): "more" when over 100x, None without such a refusal."""
    for error in errors or []:
        if error.startswith("schema.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost"):
            text = error.split("by factor of ")[1].split("x ")[0]
            return "more" if text.startswith("more") else (float(text), len(text.split(".")[1]))
    return None


def rule_cost(server, schema):
    """The rule's estimated cost: an integer when the refusals pin it down, else [low, high]."""
    probe = lambda n: factor(server.create({"type": "array", "maxItems": n, "items": schema}))
    n = LIMIT
    found = probe(n)
    while found == "more" and n > 1:
        n //= 10
        found = probe(n)
    if found is None:
        return 0 if probe(LIMIT + 1) is None else 1
    if found == "more":
        return "over"
    best = (n, found)
    for _ in range(6):
        (n, (f, decimals)) = best
        if decimals == 6:
            break
        # Aim the product at 1.25 times the limit, where the factor shows six decimals.
        candidate = max(1, round(n * 1.25 / f))
        got = probe(candidate)
        if got is None or got == "more" or candidate == n:
            break
        best = (candidate, got)
    (n, (f, decimals)) = best
    half = 0.5 * 10 ** -decimals
    low, high = (f - half) * LIMIT / n, (f + half) * LIMIT / n
    if high - low < 1:
        return round(f * LIMIT / n)
    return [int(low), int(high) + 1]


def main():
    with open(TABLE) as f:
        text = f.read()
    header = "".join(line for line in text.splitlines(True) if line.startswith("#"))
    table = yaml.safe_load(text)
    with tempfile.TemporaryDirectory() as run:
        server = ApiServer(run)
        try:
            for row in table["rows"]:
                errors = server.create(row["schema"])
                recorded = {"admitted": errors is None}
                if errors:
                    recorded["errors"] = errors
                if errors is None and row["schema"].get("x-kubernetes-validations"):
                    recorded["ruleCost"] = rule_cost(server, row["schema"])
                row["apiServer"] = recorded
                print(row["name"], json.dumps(recorded), flush=True)
        finally:
            server.stop()
    version = subprocess.run([os.path.join(BIN, "kube-apiserver"), "--version"], capture_output=True, text=True)
    table["recordedWith"] = "kube-apiserver " + version.stdout.split()[-1]
    with open(TABLE, "w") as f:
        f.write(header)
        yaml.safe_dump(table, f, sort_keys=False, width=1000, allow_unicode=True)


main()
