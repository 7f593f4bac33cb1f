// Reading an operator-run witness's log over HTTP (docs/CONTRACTS.md §4.4): one GET of a
// fixed path on an IPv4 address the profile names (or the sandbox's jumphost), HTTP/1.0
// with Connection: close, the whole exchange under one deadline and the answer read up to
// a byte bound. No redirects, no names resolved, nothing from the answer interpreted but
// the status line, the end of the headers and the body. Parsing is separate from I/O.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "harness/common/expected.h"

namespace isoharness::deploy::hawk {

struct HttpBody {
  std::string body;
  bool truncated = false;  // the answer went past max_body: only its first max_body bytes are here
};

// The answer of a GET as read off the socket (possibly cut at the read bound: `cut`).
// An error unless its status line is "HTTP/1.x 200" and its headers end.
Expected<HttpBody> parse_http_answer(std::string_view raw, std::size_t max_body, bool cut);

// The request the reader sends, for the log of `path` on host:port.
std::string http_get_request(const std::string& host, int port, const std::string& path);

// GET http://ipv4:port/path; at most max_body bytes of body, everything within `timeout`.
Expected<HttpBody> http_get_bounded(const std::string& ipv4, int port, const std::string& path,
                                    std::size_t max_body, std::chrono::milliseconds timeout);

}  // namespace isoharness::deploy::hawk
