// `isoprobe serve`: a small TCP listener a sibling service runs so that whether it can be
// reached is observable from its siblings. Every connection gets one line,
// "isoprobe-serve <name>\n", and is closed; nothing is read. The listener stops by itself
// after max_seconds, so a sandbox that is never torn down does not serve forever.
#pragma once

#include <cstdint>
#include <string>

namespace isoprobe {

struct ServeOptions {
  std::uint16_t port = 8080;
  std::string name = "sibling";  // [A-Za-z0-9._-], at most 63 bytes
  long max_seconds = 7200;
};

// The line every connection gets (with the trailing newline).
std::string serve_banner(const std::string& name);

// Whether a name may appear in the banner.
bool valid_serve_name(const std::string& name);

// Serves until max_seconds pass. Returns 0 then; 3 with a message on stderr when the
// port cannot be bound.
int run_serve(const ServeOptions& options);

}  // namespace isoprobe
