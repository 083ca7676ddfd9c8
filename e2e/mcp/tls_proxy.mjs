// A TLS-terminating reverse proxy for the bridge's HTTPS tests:
// https://127.0.0.1:<printed port> → http://127.0.0.1:<TARGET_PORT>, streaming
// both ways (Server-Sent Events pass through as they come).
// Usage: node tls_proxy.mjs CERT.pem KEY.pem TARGET_PORT
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

const [cert, key, target] = process.argv.slice(2);
const server = https.createServer(
  { cert: fs.readFileSync(cert), key: fs.readFileSync(key) },
  (req, res) => {
    const upstream = http.request(
      {
        host: "127.0.0.1",
        port: Number(target),
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(upstream);
  },
);
server.listen(0, "127.0.0.1", () => {
  console.log(server.address().port);
});
