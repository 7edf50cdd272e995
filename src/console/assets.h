// The web console's static files (src/console/assets/ and uPlot from npm), compiled into the
// binary at build time (cmake/embed_assets.cmake), so the server fetches and reads nothing at
// run time.
//
// Contract
// - ConsoleAssets() lists every file by the URL path it is served at ("/assets/console.js").
//   The bytes live for the whole program.
// - ContentType() names the MIME type of a path by its extension.
#pragma once

#include <span>
#include <string_view>

namespace millrace::console {

struct EmbeddedAsset {
  std::string_view path;  // the URL path
  std::string_view body;
};

std::span<const EmbeddedAsset> ConsoleAssets();
std::string_view ContentType(std::string_view path);

}  // namespace millrace::console
