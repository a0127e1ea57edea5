// material's search script reads one index, search/search_index.json, with an
// XMLHttpRequest. sitegen publishes that index in parts, one per report, so that a new
// version stores only the parts it changed (sitegen/pages/search_index.py): the file names
// its parts. This joins them before material's script sees the index; where it cannot,
// the script gets an error and the search says so.
(() => {
  const INDEX = /\/search\/search_index\.json$/;
  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;

  const readJson = (address) =>
    fetch(address).then((response) => {
      if (!response.ok) throw new Error(`${address}: ${response.status}`);
      return response.json();
    });

  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const address = new URL(String(url), document.baseURI);
    this.sitegenSearchIndex = INDEX.test(address.pathname) ? address : null;
    return open.call(this, method, url, ...rest);
  };

  XMLHttpRequest.prototype.send = function (body) {
    const address = this.sitegenSearchIndex;
    if (!address) return send.call(this, body);
    const request = this;
    readJson(address)
      .then((index) =>
        Promise.all((index.parts || []).map((part) => readJson(new URL(part, address)))).then(
          (parts) => {
            const docs = index.docs.concat(...parts.map((part) => part.docs));
            const joined = JSON.stringify({ config: index.config, docs });
            Object.defineProperty(request, "status", { value: 200 });
            Object.defineProperty(request, "response", {
              value: new Blob([joined], { type: "application/json" }),
            });
            request.dispatchEvent(new ProgressEvent("load"));
          },
        ),
      )
      .catch(() => request.dispatchEvent(new ProgressEvent("error")));
  };
})();
