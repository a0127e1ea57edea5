// mkdocs-material's inline head script (partials/javascripts/base.html), as a file so the
// Content-Security-Policy allows it. The scope is the version's root, which the page names
// (data-scope): this file lies in the objects that every version shares.
__md_scope = new URL(document.currentScript.dataset.scope, location);
__md_hash = (e) => [...e].reduce((e, _) => (e << 5) - e + _.charCodeAt(0), 0);
__md_get = (e, _ = localStorage, t = __md_scope) => JSON.parse(_.getItem(t.pathname + "." + e));
__md_set = (e, _, t = localStorage, a = __md_scope) => {
  try {
    t.setItem(a.pathname + "." + e, JSON.stringify(_));
  } catch (e) {}
};
