package voice

import (
	"reflect"
	"testing"
)

func TestExpandArgv(t *testing.T) {
	r := synthRequest{Text: "Hallo Welt", Lang: "de", Out: "/tmp/o.wav"}
	cases := []struct {
		name string
		tmpl []string
		r    func(synthRequest) synthRequest
		want []string
	}{
		{"all placeholders", []string{"piper", "--model", "{voice}.onnx", "--output_file", "{out}", "{text}"},
			func(r synthRequest) synthRequest { r.Voice = "de_DE-thorsten"; return r },
			[]string{"piper", "--model", "de_DE-thorsten.onnx", "--output_file", "/tmp/o.wav", "Hallo Welt"}},
		{"voice falls back to lang", []string{"eng", "-l", "{lang}", "-v", "{voice}", "-o", "{out}"}, nil,
			[]string{"eng", "-l", "de", "-v", "de", "-o", "/tmp/o.wav"}},
		{"inside an element", []string{"eng", "--text={text}", "--out={out}"}, nil,
			[]string{"eng", "--text=Hallo Welt", "--out=/tmp/o.wav"}},
		{"dash text gets a leading space", []string{"eng", "{text}", "{out}"},
			func(r synthRequest) synthRequest { r.Text = "-rf /"; return r },
			[]string{"eng", " -rf /", "/tmp/o.wav"}},
		{"double dash text", []string{"eng", "{text}"},
			func(r synthRequest) synthRequest { r.Text = "--help me"; return r },
			[]string{"eng", " --help me"}},
		{"placeholders in text stay literal", []string{"eng", "{text}", "{out}"},
			func(r synthRequest) synthRequest { r.Text = "write {out} and {lang}"; return r },
			[]string{"eng", "write {out} and {lang}", "/tmp/o.wav"}},
		{"unknown placeholder untouched", []string{"eng", "{speed}", "{out}"}, nil,
			[]string{"eng", "{speed}", "/tmp/o.wav"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := r
			if c.r != nil {
				req = c.r(r)
			}
			if got := expandArgv(c.tmpl, req); !reflect.DeepEqual(got, c.want) {
				t.Errorf("expandArgv = %q, want %q", got, c.want)
			}
		})
	}
}
