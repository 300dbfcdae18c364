// jsforce reads proxy variables at import and ignores NO_PROXY: tests talk to loopback only.
for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) {
  delete process.env[name];
}
