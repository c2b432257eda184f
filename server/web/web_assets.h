#ifndef WM_SERVER_WEB_WEB_ASSETS_H_
#define WM_SERVER_WEB_WEB_ASSETS_H_

#include <string>

#include "server/observability/http_server.h"

namespace wm::web {

// The web page (server/web/assets: index.html, app.js, app.css), embedded in
// the binary at build time, served at "/", "/app.js" and "/app.css". The
// page holds no data (it reads the API), so it is served to anyone; its
// headers forbid what a page of ours never does (scripts, styles or fetches
// from anywhere but the daemon, being framed), so a name from the cluster
// that slipped into markup could not run.
//
// `directory`, when not empty, serves the files from there instead, read at
// each request: for working on the page without rebuilding the daemon
// (--web-assets-dir); never for production.
void RegisterWebAssets(observability::HttpServer& server, std::string directory = "");

}  // namespace wm::web

#endif  // WM_SERVER_WEB_WEB_ASSETS_H_
