package plugin

import (
	"context"
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/sampleusage"
)

func (o *options) retryImportsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retry-imports [IMAGESTREAM]",
		Short: "Import every failing tag of the sample imagestreams (or of one) now, and print what happened",
		Long: `retry-imports asks the image API to import again each tag whose last import failed, as
"oc import-image" does, for every sample imagestream or the one named, and prints the server's
answer for each tag. The operator retries on its own; this is for an admin who just fixed the
cause and does not want to wait.

Exit status 1 when a tag still fails.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.retryImports(cmd.Context(), args)
		},
	}
	o.addOKDFlag(cmd.Flags())
	return cmd
}

// importResult is one tag's answer.
type importResult struct {
	ImageStream string `json:"imagestream"`
	Tag         string `json:"tag"`
	// Result: imported, failed, or requested (the server answered without a result).
	Result  string `json:"result"`
	Image   string `json:"image,omitempty"`
	Message string `json:"message,omitempty"`
}

func (o *options) retryImports(ctx context.Context, args []string) error {
	v, err := o.readSamples(ctx, true)
	if err != nil {
		return err
	}
	var names []string
	if len(args) == 1 {
		t, err := sampleusage.ParseTarget(args[0], v.known())
		if err == nil && t.ImageStream == "" {
			err = fmt.Errorf("%s is a template: only imagestreams import", args[0])
		}
		if err == nil && t.Tag != "" {
			err = fmt.Errorf("name the imagestream (%s): every failing tag of it is retried", t.ImageStream)
		}
		if err != nil {
			return &exitError{code: ExitUsage, err: err}
		}
		names = []string{t.ImageStream}
	} else {
		for _, is := range v.streams {
			if samplereport.IsSample(is) {
				names = append(names, is.Name)
			}
		}
	}
	results := []importResult{} // -o json: [] says no tag was to retry, where null would say nothing
	for _, name := range names {
		is := v.liveStream(name)
		if is == nil {
			if len(args) == 1 {
				return &exitError{code: ExitFailing, err: fmt.Errorf("imagestream %s is not on the cluster: nothing to import", name)}
			}
			continue
		}
		r, err := o.retryStream(ctx, is)
		if err != nil {
			return err
		}
		results = append(results, r...)
	}
	return o.printImports(results, len(args) == 1)
}

// retryStream imports the stream's failing tags once; a stream changed since it was read is read
// again, as the import names the version it was built from.
func (o *options) retryStream(ctx context.Context, is *imagev1.ImageStream) ([]importResult, error) {
	var results []importResult
	streams := o.clients.images.ImageV1().ImageStreams(names.SamplesNamespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		results = nil
		failed := imports.FailedTags(is)
		isi := imports.RetryImport(is, failed)
		if isi == nil {
			return nil
		}
		answer, err := o.clients.images.ImageV1().ImageStreamImports(names.SamplesNamespace).Create(ctx, isi, metav1.CreateOptions{})
		if err != nil {
			if fresh, gerr := streams.Get(ctx, is.Name, metav1.GetOptions{}); gerr == nil {
				is = fresh
			}
			return err
		}
		for i, spec := range isi.Spec.Images {
			r := importResult{ImageStream: is.Name, Tag: spec.To.Name, Result: "requested"}
			if i < len(answer.Status.Images) {
				st := answer.Status.Images[i]
				switch {
				case st.Status.Status == metav1.StatusSuccess:
					r.Result = "imported"
					if st.Image != nil {
						r.Image = st.Image.Name
					}
				default:
					r.Result, r.Message = "failed", oneLine(st.Status.Message)
				}
			}
			results = append(results, r)
		}
		return nil
	})
	if err != nil {
		return nil, requestError("import imagestream "+is.Name, err)
	}
	return results, nil
}

func (o *options) printImports(results []importResult, named bool) error {
	failing := false
	for _, r := range results {
		failing = failing || r.Result == "failed"
	}
	if done, err := o.printStructured(results); done {
		if err == nil && failing {
			err = errFailing
		}
		return err
	}
	if len(results) == 0 {
		what := "no sample imagestream has a failing tag"
		if named {
			what = "no tag of it is failing"
		}
		fmt.Fprintln(o.out, what+": nothing to retry")
		return nil
	}
	tw := newTable(o.out)
	fmt.Fprintln(tw, "IMAGESTREAM\tTAG\tRESULT\tIMAGE\tMESSAGE")
	imported := 0
	for _, r := range results {
		if r.Result == "imported" {
			imported++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ImageStream, r.Tag, r.Result, dash(shortDigest(r.Image)), dash(r.Message))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "%d of %s imported\n", imported, plural(len(results), "failing tag"))
	if failing {
		return errFailing
	}
	return nil
}
