// Package voice turns admitted utterances into sound: it is the queue.Speaker of talkd.
//
// A provider (speech engine) synthesizes each utterance into an audio file, a sink plays
// or keeps that file. The queue calls Prepare (synthesis) for the next utterance while the
// current one still plays, and Play (playback) never concurrently, so speech never
// overlaps while the gap between utterances stays short.
//
// Providers: espeak (espeak-ng or espeak), say (macOS), sapi (Windows, PowerShell with
// System.Speech), any [[voice.commands]] entry (an argv template), and fake (tests).
// "auto" takes the first engine of the platform (Linux espeak; macOS say, then espeak;
// Windows sapi, then espeak) and Info says which and why; with none found every
// utterance fails with a message naming what to install, rather than the daemon refusing
// to start. Engines always run as argv, never through a shell; text goes in on stdin or
// an environment variable where the engine allows, and a {text} argument that would start
// with "-" gets a leading space, so spoken words can never become options.
//
// Sinks: null (discard), dir:<path> (one file per utterance, NNNNNN-<id>.wav, numbered
// on across restarts; each file appears under its final name only when complete), auto
// (the first player found: voice.players, else pw-play, paplay, aplay, afplay, ffplay;
// none found → null with a log line).
//
// Every external process runs with voice.timeout (players: at least 1.5 × the audio
// length) and is killed together with its children (its own process group on Unix,
// taskkill /T on Windows) on timeout or when the queue cancels (stop, mute, shutdown).
// Stderr is kept only up to 4 KiB. Engine output is checked, not the exit status:
// espeak-ng exits 0 when it could not write its file.
//
// Before synthesis the text is cleaned (see Clean): URLs become their host name or
// "link", markdown markers and fenced code go, long texts are cut at a sentence end.
//
// # The fake provider's log
//
// The fake provider writes a short silent WAV (so dir: sinks still get a file), "speaks"
// for voice.fake_duration, and then appends one JSON object per utterance and line to
// voice.fake_log (default <state_dir>/fake-voice.jsonl). Each line is written with one
// write call on an O_APPEND file, so readers never see a partial line. Fields, all always
// present except error:
//
//	id           utterance id
//	text         the text as admitted
//	spoken       the text after cleanup, as the engine got it
//	lang         "de" or "en"
//	priority     "low", "normal" or "high"
//	provider     "fake"
//	caller       client id ("local" in local mode)
//	agent        claimed agent name, "" when none
//	start, end   RFC 3339 timestamps with nanoseconds; end ≥ start, and for two lines
//	             end of the earlier ≤ start of the later (playback never overlaps)
//	interrupted  true when stop, mute or shutdown cut the utterance short
//	error        the sink's error, when it failed (omitted otherwise)
//
// Lines are in speaking order. Tests of the whole product observe speech through this file.
package voice
