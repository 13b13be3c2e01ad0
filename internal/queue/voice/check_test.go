package voice

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"talkd/internal/queue"
)

func TestLanguageAndVoiceMatching(t *testing.T) {
	list := []VoiceInfo{{ID: "de", Lang: "de"}, {ID: "en-us", Name: "English_(America)", Lang: "en-us"}, {ID: "fr-fr", Lang: "fr-fr"}, {ID: "pt-br", Lang: "pt-br"}, {ID: "Anna", Name: "Anna", Lang: "de_DE"}}
	for lang, want := range map[string]bool{"de": true, "DE-at": true, "fr": true, "en-US": true, "pt-BR": true, "pt": true, "it": false, "e": false} {
		if got := speaksLang(list, lang); got != want {
			t.Errorf("speaksLang(%q) = %v", lang, got)
		}
	}
	for name, want := range map[string]bool{"en-us+f3": true, "anna": true, "English_(America)": true, "klingon": false} {
		if got := hasVoice(list, name); got != want {
			t.Errorf("hasVoice(%q) = %v", name, got)
		}
	}
	if got := closeLangs(list, "fx"); !strings.Contains(got, "close matches: fr-fr") {
		t.Errorf("closeLangs fx: %s", got)
	}
	if got := closeLangs(list, "qq"); !strings.Contains(got, "de, de-de, en-us, fr-fr, pt-br") {
		t.Errorf("closeLangs qq: %s", got)
	}
}

// A voice list that cannot be read is tried again only after listRetry, and reported
// fresh once, so a broken engine does not slow or flood every request.
func TestVoiceListFailureIsRemembered(t *testing.T) {
	var c voiceCache
	calls := 0
	load := func(context.Context) ([]VoiceInfo, error) { calls++; return nil, errors.New("hung") }
	_, fresh1, err1 := c.get(context.Background(), time.Minute, load)
	_, fresh2, err2 := c.get(context.Background(), time.Minute, load)
	if calls != 1 || !fresh1 || fresh2 || err1 == nil || err2 == nil {
		t.Fatalf("calls %d, fresh %v %v, errs %v %v", calls, fresh1, fresh2, err1, err2)
	}
}

// A slow voice list does not hold up the caller that does not wait for it, nor a second
// caller: both get errListPending while the one load runs, and the list once it is there.
func TestVoiceListLoadsOnItsOwn(t *testing.T) {
	var c voiceCache
	release := make(chan struct{})
	calls := 0
	load := func(context.Context) ([]VoiceInfo, error) {
		calls++
		<-release
		return []VoiceInfo{{ID: "french", Lang: "fr"}}, nil
	}
	for i := 0; i < 2; i++ {
		if _, _, err := c.get(context.Background(), 0, load); !errors.Is(err, errListPending) {
			t.Fatalf("call %d while loading: %v", i, err)
		}
	}
	close(release)
	list, _, err := c.get(context.Background(), time.Minute, load)
	if err != nil || len(list) != 1 || calls != 1 {
		t.Fatalf("after the load: %v %v, %d loads", list, err, calls)
	}
}

func TestSpeechdArguments(t *testing.T) {
	s := &speechd{bin: "/usr/bin/spd-say"}
	got := strings.Join(s.argv(synthRequest{Text: "-rf now", Lang: "pt-BR", Voice: "female1", Speed: 87, Pitch: 99, Volume: 250}), " ")
	if want := "/usr/bin/spd-say -w -N talkd -l pt-br -y female1 -r -50 -p 98 -i 100 -- -rf now"; got != want {
		t.Errorf("argv %q\nwant %q", got, want)
	}
	if l := parseSpeechdVoices("NAME LANGUAGE VARIANT\nfemale1 fr none\n\nmale2 de-DE none\n"); len(l) != 2 || l[1].Lang != "de-DE" {
		t.Errorf("voices %+v", l)
	}
}

// The voice of an utterance: the request's, else the agent's, else the language's (a
// regional tag falling back to its language), else the engine's choice.
func TestVoiceName(t *testing.T) {
	v := &engineSet{voiceFor: map[string]string{"de": "thorsten", "en-GB": "alan"}, agentVoice: map[string]string{"@Müller": "karl"}}
	for _, c := range []struct {
		u    queue.Utterance
		lang string
		want string
	}{
		{queue.Utterance{Voice: "anna", Agent: "@Müller"}, "de", "anna"},
		{queue.Utterance{Agent: "@Müller"}, "de", "karl"},
		{queue.Utterance{Agent: "@jörg"}, "de-AT", "thorsten"},
		{queue.Utterance{}, "en-GB", "alan"},
		{queue.Utterance{}, "fr", ""},
	} {
		if got := v.voiceName(c.u, c.lang); got != c.want {
			t.Errorf("%+v in %s: %q, want %q", c.u, c.lang, got, c.want)
		}
	}
}
