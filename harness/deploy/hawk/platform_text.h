// Text the platform printed (`hawk logs`, CLI prompts), judged before it is shown or kept.
// It comes from a remote service and from whatever ran in the eval's pods, so it is
// bounded and neutralised here, and never interpreted. Text only, no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace isoharness::deploy::hawk {

inline constexpr std::size_t kLogTailLines = 40;
inline constexpr std::size_t kLogTailBytes = 4096;

// The last max_lines lines of text, at most max_bytes of them (a longer last line keeps its
// end), with every byte outside printable ASCII but the newline replaced by '?', and no
// trailing newline.
std::string platform_tail(std::string_view text, std::size_t max_lines = kLogTailLines,
                          std::size_t max_bytes = kLogTailBytes);

// Which of a CLI call's streams a text is.
enum class Stream { out, err };

// How much of stdout may hold a login prompt: the device flow speaks before a command's own
// output, so only stdout's first bytes, before a line opening with `{` or `[` (the JSON of
// `status`, the entries of `logs`, which carry what the eval's pods printed), are read.
inline constexpr std::size_t kStdoutPromptWindow = std::size_t{16} * 1024;

// Why a CLI call must stop: a non-empty answer when what a stream printed so far (the last
// `fresh` bytes new) shows the CLI starting an interactive login that waits for a person.
// Read by shape, not by fixed sentences: a phrase of the device flow ("no valid access
// token", "logging in", "device code", "user code", ...), a URL whose query carries a code,
// or a URL beside a user code (`WDJB-MJHT`) or a sign-in word ("activate", "verify", ...).
// A refresh of a token that needs no person ("refreshing") is not a prompt.
std::string login_prompt(std::string_view text, std::size_t fresh, Stream stream = Stream::err);

}  // namespace isoharness::deploy::hawk
