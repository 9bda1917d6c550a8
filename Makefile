# probegate — a thin index of targets over hack/ scripts and the probegate CLI. `make help` lists them.
SHELL := /bin/bash
GO ?= go
# The CLI is built, then run directly: `go run` keeps a SIGINT sent to it (kill -INT, a CI cancel)
# from reaching the program and dies on SIGTERM leaving it running, so a run could not be stopped
# cleanly (faults reverted, report written, exit 130/143).
PROBEGATE := bin/probegate
OUT ?= _out

.PHONY: help
help: ## list targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

.PHONY: $(PROBEGATE)
$(PROBEGATE):
	$(GO) build -o $@ ./cmd/probegate

.PHONY: run
run: images $(PROBEGATE) ## run the default suite against the bundled target on the local kind cluster (creates it if needed)
	$(PROBEGATE) run --out $(OUT)

.PHONY: examples
examples: images $(PROBEGATE) ## build the open-source example apps and run the default suite against each (examples/README.md)
	hack/examples.sh
	$(PROBEGATE) run --target examples/podinfo/target.yaml --out $(OUT)/podinfo; pod=$$?; \
	$(PROBEGATE) run --target examples/miniflux/target.yaml --out $(OUT)/miniflux; mf=$$?; \
	$(PROBEGATE) run --target examples/etcd/target.yaml --out $(OUT)/etcd; etcd=$$?; \
	echo "podinfo exit $$pod, miniflux exit $$mf, etcd exit $$etcd (0 pass, 1 fail, 3 inconclusive)"; \
	$(GO) run ./hack/decidedfig podinfo=$(OUT)/podinfo miniflux=$(OUT)/miniflux etcd=$(OUT)/etcd || true

.PHONY: test
test: ## all tests: unit, then integration on the real kind cluster, one-node then multi-node (creates each)
	hack/test.sh

.PHONY: test-multinode
test-multinode: ## the test command's multi-node phase alone: a 1 control-plane + 2 worker cluster, its pod network test, node-drain, node-loss, zone-spread and their rows
	PROBEGATE_PHASES=multi-node PROBEGATE_MULTINODE_GOOD=1 hack/test.sh

.PHONY: test-short
test-short: ## unit tests only (no cluster, no docker)
	$(GO) test -short -count=1 ./...

.PHONY: bench
bench: ## benchmarks; prints one FIGURE line per speed/memory target
	hack/bench.sh

.PHONY: soak
soak: ## run suite + mutation matrix N times (N=5), one-node then multi-node (SOAK_PHASES), and print FIGURE verdict-flips / inconclusive-rate per phase
	N=$(N) hack/soak.sh

.PHONY: lint
lint: ## gofmt + go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: host
host: ## prepare the host: docker, dockerd, runtime workaround, egress fence
	hack/host-prep.sh

.PHONY: node-image
node-image: ## build the offline kind node image (cached by content)
	hack/node-image.sh

.PHONY: images
images: ## build every image the cluster runs (target, postgres, toxiproxy; cached by content)
	hack/images.sh

.PHONY: probegate-image
probegate-image: ## build probegate itself as a container image, probegate/probegate:dev (CI; docs/ci.md; cached by content)
	hack/probegate-image.sh

.PHONY: cluster
cluster: $(PROBEGATE) ## create (or reuse) the kind cluster and wait until node and CoreDNS are ready
	$(PROBEGATE) cluster create

.PHONY: cluster-down
cluster-down: $(PROBEGATE) ## delete the kind cluster and restore host sysctls
	$(PROBEGATE) cluster delete

.PHONY: deploy
deploy: $(PROBEGATE) ## deploy postgres, toxiproxy and the target (VARIANT=good) into NAMESPACE=probegate
	$(PROBEGATE) deploy --variant $${VARIANT:-good} --namespace $${NAMESPACE:-probegate}
