# Multi-stage build: a static operator binary on a minimal base, running as a non-root user.
# The sample inventory is embedded in the binary (go:embed), so the image carries no sample files;
# manifests/ is copied for the cluster-version operator, which reads /manifests from the image.
FROM docker.io/library/golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.0.1-snapshot
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
      -o /out/cluster-samples-operator ./cmd/cluster-samples-operator

FROM registry.access.redhat.com/ubi9/ubi-micro:latest
COPY --from=build /out/cluster-samples-operator /usr/bin/cluster-samples-operator
COPY manifests/ /manifests/
# A numeric UID so that runAsNonRoot can verify it without a passwd entry.
USER 1001:0
LABEL io.openshift.release.operator=true \
      io.k8s.display-name="cluster-samples-operator" \
      io.k8s.description="Installs and maintains the sample ImageStreams and Templates of the openshift namespace"
ENTRYPOINT []
CMD ["/usr/bin/cluster-samples-operator"]
