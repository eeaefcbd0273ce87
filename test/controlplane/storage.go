package controlplane

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// osaStoragePrefix is where the real openshift-apiserver keeps its objects in etcd.
const osaStoragePrefix = "openshift.io"

// DeleteStoredOpenShiftObject deletes an object of the real openshift-apiserver from etcd
// directly: resource, namespace and name make its key under the server's storage prefix. It is
// how a test changes what that server holds while the server is stopped (an admin's delete
// through another replica, during a rolling restart), which no request through kube-apiserver
// can. It reports whether there was such a key.
func (cp *ControlPlane) DeleteStoredOpenShiftObject(ctx context.Context, resource, namespace, name string) (bool, error) {
	if !cp.RealOpenShiftAPIServer() {
		return false, fmt.Errorf("no real openshift-apiserver: the stand-ins' objects are kube-apiserver's")
	}
	key := "/" + osaStoragePrefix + "/" + resource + "/" + namespace + "/" + name
	// etcd's JSON gateway, over the plain HTTP the test etcd listens on: no client library.
	body, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cp.etcdURL+"/v3/kv/deleterange", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("etcd deleterange %s: %s: %s", key, resp.Status, data)
	}
	var answer struct {
		Deleted string `json:"deleted"` // an int64, which the gateway writes as a string
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return false, fmt.Errorf("etcd deleterange %s: %w: %s", key, err, data)
	}
	return answer.Deleted != "" && answer.Deleted != "0", nil
}
