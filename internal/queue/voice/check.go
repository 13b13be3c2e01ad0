package voice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Check tells whether provider ("" = the default) can speak lang with voiceName ("" =
// its choice), against the engine's own voice list, loaded once per engine. field names
// the request field at fault ("lang" or "voice"); the error lists close matches. An
// engine that cannot list its voices (a command) accepts every well-formed value.
func (v *Voice) Check(ctx context.Context, provider, lang, voiceName string) (field string, err error) {
	return v.set.Load().Check(ctx, provider, lang, voiceName)
}

// Check is Voice.Check for this set.
func (v *engineSet) Check(ctx context.Context, provider, lang, voiceName string) (field string, err error) {
	if provider == "" {
		provider = v.defName
	}
	if voiceName == "" && (lang == "" || lang == v.lang) && provider == v.defName {
		return "", nil // the default language of the default engine was checked at start
	}
	return v.check(ctx, provider, lang, voiceName)
}

// check is Check without the shortcut for the default language.
func (v *engineSet) check(ctx context.Context, provider, lang, voiceName string) (field string, err error) {
	e, ok := v.providers[provider]
	if !ok {
		return "provider", fmt.Errorf("provider %q is not available here", provider)
	}
	cache := v.lists[provider]
	if cache == nil || provider == ProviderNone {
		return "", nil // no engine: speaking fails anyway, with the hint what to install
	}
	list, fresh, lerr := cache.get(ctx, listWait(e), e.voices)
	if errors.Is(lerr, errListPending) {
		v.log.DebugContext(ctx, "voice list not loaded yet; language and voice not checked", "provider", provider)
		return "", nil
	}
	if lerr != nil {
		if fresh && !errors.Is(lerr, ErrNoVoiceList) {
			// The list could not be read now: the engine decides when it speaks.
			v.log.Warn("voice list unavailable; languages and voices are not checked", "provider", provider, "retry_in", listRetry, "err", lerr)
		}
		return "", nil
	}
	if lang != "" && !cache.speaks(list, lang) {
		return "lang", fmt.Errorf("%s cannot speak %q; %s", provider, lang, closeLangs(list, lang))
	}
	if voiceName != "" && !hasVoice(list, voiceName) {
		return "voice", fmt.Errorf("%s has no voice %q; %s", provider, voiceName, closeVoices(list, voiceName))
	}
	return "", nil
}

// listWait is how long an admission waits for an engine's voice list on first use.
// speech-dispatcher's list can take seconds while the server starts (or forever when it
// hangs), so its first announcements are admitted unchecked instead; the local engines
// list theirs in milliseconds.
func listWait(e provider) time.Duration {
	if _, ok := e.(*speechd); ok {
		return 0
	}
	return listLoadTimeout
}

// normLang lower-cases a tag and writes its separators as "-" (say lists de_DE).
func normLang(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

// speaks is speaksLang remembered per tag, so the voice list is scanned once per
// language, not on every request.
func (c *voiceCache) speaks(list []VoiceInfo, lang string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok, seen := c.langs[lang]
	if !seen {
		if c.langs == nil || len(c.langs) > 256 {
			c.langs = map[string]bool{}
		}
		ok = speaksLang(list, lang)
		c.langs[lang] = ok
	}
	return ok
}

// speaksLang reports whether a voice speaks lang: the same tag, a more specific one
// ("fr" → fr-fr), or a more general one ("en-au" → en).
func speaksLang(list []VoiceInfo, lang string) bool {
	l := normLang(lang)
	for _, v := range list {
		vl := normLang(v.Lang)
		if vl == l || strings.HasPrefix(vl, l+"-") || strings.HasPrefix(l, vl+"-") {
			return true
		}
	}
	return false
}

// hasVoice matches a voice by id or name, case-insensitively; an espeak-ng variant
// ("en-us+f3") is matched by its voice.
func hasVoice(list []VoiceInfo, name string) bool {
	base, _, _ := strings.Cut(name, "+")
	for _, v := range list {
		if strings.EqualFold(v.ID, base) || strings.EqualFold(v.Name, base) || strings.EqualFold(v.Name, name) {
			return true
		}
	}
	return false
}

// maxMatches bounds the close matches an error lists.
const maxMatches = 10

// closeLangs names the engine's languages that share the tag's first letters, or all of
// them when the engine has few.
func closeLangs(list []VoiceInfo, lang string) string {
	var all []string
	for _, v := range list {
		if l := normLang(v.Lang); l != "" && !slices.Contains(all, l) {
			all = append(all, l)
		}
	}
	slices.Sort(all)
	return matches(all, normLang(lang), "languages", "talk voices lists them all")
}

func closeVoices(list []VoiceInfo, name string) string {
	var all []string
	for _, v := range list {
		if !slices.Contains(all, v.ID) {
			all = append(all, v.ID)
		}
	}
	slices.Sort(all)
	return matches(all, strings.ToLower(name), "voices", "talk voices lists them all")
}

// matches lists the candidates starting with the first two, else the first, letters of
// want; when none does, the whole list if it is short.
func matches(all []string, want, what, more string) string {
	for _, n := range []int{2, 1} {
		if len(want) < n {
			continue
		}
		var close []string
		for _, c := range all {
			if strings.HasPrefix(strings.ToLower(c), want[:n]) {
				close = append(close, c)
			}
		}
		if len(close) > 0 {
			if len(close) > maxMatches {
				close = append(close[:maxMatches], "…")
			}
			return "close matches: " + strings.Join(close, ", ") + " (" + more + ")"
		}
	}
	if len(all) <= maxMatches {
		return "it has these " + what + ": " + strings.Join(all, ", ")
	}
	return "no close match; " + more
}
