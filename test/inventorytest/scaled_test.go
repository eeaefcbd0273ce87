package inventorytest

import "testing"

func TestScaledHasFactorCopiesOfEachSample(t *testing.T) {
	one, err := Scaled(1)
	if err != nil {
		t.Fatal(err)
	}
	ten, err := Scaled(10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ten.ImageStreamNames()), 10*len(one.ImageStreamNames()); got != want {
		t.Errorf("imagestreams: %d, want %d", got, want)
	}
	if got, want := len(ten.TemplateNames()), 10*len(one.TemplateNames()); got != want {
		t.Errorf("templates: %d, want %d", got, want)
	}
}
