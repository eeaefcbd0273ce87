package samplewriter

import (
	"sort"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/utils/clock"
)

// Kinds of sample, as records and events name them.
const (
	ImageStreamKind = "ImageStream"
	TemplateKind    = "Template"
)

// Book holds the writer's records of both kinds of sample. The samples controller writes them;
// the status controller reads the server's answers and the spent revert budgets from them.
type Book struct {
	ImageStreams *Records[*imagev1.ImageStream]
	Templates    *Records[*templatev1.Template]
}

// NewBook returns empty records; revertWindow <= 0 means RevertWindow.
func NewBook(clk clock.PassiveClock, revertWindow time.Duration) *Book {
	if revertWindow <= 0 {
		revertWindow = RevertWindow
	}
	return &Book{
		ImageStreams: NewRecords[*imagev1.ImageStream](clk, revertWindow),
		Templates:    NewRecords[*templatev1.Template](clk, revertWindow),
	}
}

// AnswersVersion changes whenever an answer of either kind is kept or forgotten.
func (b *Book) AnswersVersion() uint64 {
	return b.ImageStreams.AnswersVersion() + b.Templates.AnswersVersion()
}

// HeldBack lists, sorted, the samples whose revert budget is spent, as "Kind/name".
func (b *Book) HeldBack() []string {
	var out []string
	for _, name := range b.ImageStreams.HeldBack() {
		out = append(out, ImageStreamKind+"/"+name)
	}
	for _, name := range b.Templates.HeldBack() {
		out = append(out, TemplateKind+"/"+name)
	}
	sort.Strings(out)
	return out
}
