package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum/vocab"
)

type schemaInner struct {
	N int `json:"n"`
}

type schemaEmbedded struct {
	Plan string `json:"plan" desc:"the key"`
}

type schemaIn struct {
	schemaEmbedded
	Text    string       `json:"text" minLength:"1" maxLength:"10"`
	Prio    string       `json:"prio,omitempty" enum:"low,high" default:"\"low\""`
	Tags    []string     `json:"tags,omitempty" enum:"a,b"`
	Size    *string      `json:"size" nullable:"true" enum:"S,M"`
	Base    *schemaInner `json:"base"`
	Skipped string       `json:"-"`
	hidden  string
}

type schemaOut struct {
	Count  uint64            `json:"count" desc:"not shown: outputs carry no descriptions"`
	Flat   []schemaInner     `json:"flat,omitempty" shallow:"true"`
	Maybe  *schemaInner      `json:"maybe"`
	Opt    *schemaInner      `json:"opt,omitempty"`
	Loads  map[string]int    `json:"loads"`
	Any    any               `json:"any,omitempty"`
	Nested schemaInner       `json:"nested"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
	Lists  map[string][]bool `json:"lists,omitempty"`
}

// TestSchemaDerivation: the laws of schema.go — required is what the encoder always writes,
// embedded fields are flattened, nullable is anyOf (never a type array), inputs are closed
// everywhere and outputs at the root, tags become annotations (descriptions and bounds of
// server-written numbers only in inputs), shallow keeps a result field's type.
func TestSchemaDerivation(t *testing.T) {
	in, err := schemaOf[schemaIn](inputMode)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(in)
	want := `{"additionalProperties":false,"properties":{` +
		`"base":{"additionalProperties":false,"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"},` +
		`"plan":{"description":"the key","type":"string"},` +
		`"prio":{"default":"low","enum":["low","high"],"type":"string"},` +
		`"size":{"anyOf":[{"enum":["S","M"],"type":"string"},{"type":"null"}]},` +
		`"tags":{"items":{"enum":["a","b"],"type":"string"},"type":"array"},` +
		`"text":{"maxLength":10,"minLength":1,"type":"string"}},` +
		`"required":["plan","text","size","base"],"type":"object"}`
	if string(got) != want {
		t.Errorf("input schema\n got %s\nwant %s", got, want)
	}
	out, err := schemaOf[schemaOut](outputMode)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(out)
	want = `{"additionalProperties":false,"properties":{` +
		`"any":{},"count":{"type":"integer"},"flat":{"items":{"type":"object"},"type":"array"},` +
		`"lists":{"additionalProperties":{"items":{"type":"boolean"},"type":"array"},"type":"object"},` +
		`"loads":{"additionalProperties":{"type":"integer"},"type":"object"},` +
		`"maybe":{"anyOf":[{"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"},{"type":"null"}]},` +
		`"nested":{"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"},` +
		`"opt":{"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"},` +
		`"raw":{}},"required":["count","maybe","loads","nested"],"type":"object"}`
	if string(got) != want {
		t.Errorf("output schema\n got %s\nwant %s", got, want)
	}
	if _, err := schemaOf[string](outputMode); err == nil {
		t.Error("a string root must be refused: an MCP schema's root is an object")
	}
	if _, err := schemaOf[struct{ C chan int }](outputMode); err == nil {
		t.Error("a channel has no JSON Schema")
	}
}

// TestToolListSchemas: the registered tools' schemas as hosts see them, for the fields
// that carry meaning (speak's limits and enums, set_size's nullable size, a write's base).
func TestToolListSchemas(t *testing.T) {
	f := newMCPFixture(t, nil)
	registerPlanTools(f.srv, nil, vocab.Notation)
	l, err := f.srv.mcp.reg.encoded()
	if err != nil {
		t.Fatal(err)
	}
	list := string(l.tools)
	if strings.Contains(list, `"type":[`) {
		t.Errorf("a type array: %s", list)
	}
	for _, want := range []string{
		fmt.Sprintf(`"maxLength":%d,"minLength":1,"type":"string"}`, MaxTextBytes),
		// The language pattern and the prosody bounds are struct tags; they must say what
		// validateSpeak checks.
		`"pattern":"` + config.LangTagPattern + `"`,
		fmt.Sprintf(`"rate":{"description":"Words per minute.","maximum":%d,"minimum":%d,"type":"integer"}`, queue.MaxRate, queue.MinRate),
		fmt.Sprintf(`"pitch":{"description":"50 = the voice's normal.","maximum":%d,"minimum":%d,"type":"integer"}`, queue.MaxPitch, queue.MinPitch),
		fmt.Sprintf(`"volume":{"description":"Volume in percent, 100 = normal.","maximum":%d,"minimum":%d,"type":"integer"}`, queue.MaxVolume, queue.MinVolume),
		`"priority":{"default":"normal","description":`,
		`"size":{"anyOf":[{"enum":["XS","S","M","L","XL","XXL"],"type":"string"},{"type":"null"}],"description":"the new size, or null to remove it"}`,
		`"checksum":{"pattern":"^[0-9a-f]{64}$","type":"string"}`,
		`"inProgress":{"type":"boolean"}`,
		`"state":{"enum":["applied","rejected","conflict","unknown"],"type":"string"}`,
	} {
		if !strings.Contains(list, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
}

// TestAnnouncementsPassSpeakValidation: a plan announcement the speak door would refuse
// (over the body limit, NUL, not UTF-8) never reaches the voice; a valid one does, with its caller.
func TestAnnouncementsPassSpeakValidation(t *testing.T) {
	f := newMCPFixture(t, nil)
	gate := f.srv.Announcements()
	for _, text := range []string{strings.Repeat("ä", MaxTextBytes/2+1), "a\x00b", "caf\xe9", "  "} {
		if _, err := gate.Submit(context.Background(), queue.Announcement{Text: text, Lang: "en", Priority: queue.Low}); err == nil {
			t.Errorf("%.20q passed", text)
		}
	}
	out, err := gate.Submit(context.Background(), queue.Announcement{Text: " Anna finished Token check ", Lang: "de", Priority: queue.Low, Caller: "c1", Agent: "Zoë"})
	if err != nil || out.Status != queue.StatusQueued {
		t.Fatalf("a valid announcement: %v %v", out, err)
	}
	got := f.voice.submitted()
	if len(got) != 1 || !reflect.DeepEqual(got[0], queue.Announcement{Text: "Anna finished Token check", Lang: "de", Priority: queue.Low, Caller: "c1", Agent: "Zoë"}) {
		t.Errorf("submitted: %+v", got)
	}
}
