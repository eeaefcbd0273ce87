package configstatuscontrol

import "testing"

func TestRetiredToAnnounce(t *testing.T) {
	perlAndRails := `{"version":"v2","samples":["imagestream perl","template rails"]}`
	for _, c := range []struct {
		name     string
		version  string
		retired  []string
		told     []string
		announce bool
	}{
		{name: "nothing retired", version: "v2"},
		{name: "nothing retired, never told", version: "v2", told: []string{""}},
		{name: "first announcement", version: "v2", retired: []string{"imagestream perl", "template rails"}, told: []string{"", ""}, announce: true},
		{name: "told before a restart: the annotation says so", version: "v2", retired: []string{"imagestream perl", "template rails"},
			told: []string{perlAndRails, ""}},
		{name: "told by this process, the lister not caught up", version: "v2", retired: []string{"imagestream perl", "template rails"},
			told: []string{"", perlAndRails}},
		{name: "an admin deleted a retired sample since", version: "v2", retired: []string{"template rails"}, told: []string{perlAndRails}},
		{name: "a sample retired since the announcement", version: "v2", retired: []string{"imagestream perl", "imagestream ruby", "template rails"},
			told: []string{perlAndRails}, announce: true},
		{name: "the next upgrade retires the same names", version: "v3", retired: []string{"imagestream perl", "template rails"},
			told: []string{perlAndRails}, announce: true},
		{name: "an annotation that is not ours to read", version: "v2", retired: []string{"imagestream perl"}, told: []string{"perl"}, announce: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			record, announce := retiredToAnnounce(c.version, c.retired, c.told...)
			if announce != c.announce {
				t.Fatalf("announce = %v, want %v", announce, c.announce)
			}
			if !announce {
				if record != "" {
					t.Errorf("a record %q with nothing to announce", record)
				}
				return
			}
			// What is recorded covers what was announced: told again, it is not news.
			if again, announce := retiredToAnnounce(c.version, c.retired, record); announce || again != "" {
				t.Errorf("the record %q does not cover what it announced", record)
			}
		})
	}
}
