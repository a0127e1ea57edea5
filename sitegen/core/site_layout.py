"""Where things live in a published site (shared by the renderer and the publisher).

Layout of the site directory::

    index.html                      redirect to latest/
    404.html                        the newest version's (its links start at the site root)
    versions.json                   the version list in mike's format
    v/versions.json                 the same list where mkdocs-material's selector reads it
                                    (``../versions.json`` from a version's root)
    latest/…                        one redirect page per page of the newest version
    changelog/<lang>.json           every version's changes, newest first (``{"html": …}``);
                                    each version's changelog page shows its own changes
                                    and puts these in their place where it can fetch them
    history/<report>/<lang>.json    a report's headline in every version holding it (a
                                    chart spec and the table's ``html``), read likewise by
                                    the report's history page in each version
    assets/…                        files shared by every version (plotly.js)
    objects/<sha256>/<file name>    one file a version names (a download, a chart's data):
                                    the SHA-256 of its bytes, its own name
    objects/<sha256>/…              one folder a version's pages name as a whole (the
                                    theme's assets, answer shards, table pages): the
                                    SHA-256 of its listing (``<sha256>  <path>`` lines)
    v/<label>/…                     a version's pages and the files material's scripts
                                    fetch by a name they build (search index,
                                    sitemap.xml); a page byte for byte an earlier
                                    version's is a hard link (no 404.html: hosts serve the
                                    root's; no sitemap.xml.gz: not for search engines)
    v/<label>/objects.json          the version's public map of moved files (see below)
    v/<label>/files.json(.sig)      every file the version serves and the figures its
                                    pages mark, signed (``publish.signed_files``)
    files.json(.sig)                every other file of the site but the objects, and
                                    each version's list's SHA-256, signed
    v/<label>/.sitegen-version.json that version's file hashes, the paths of the objects
                                    it uses (each named by its SHA-256) and its headline
                                    figures
    .sitegen-build.json             the last build's marker (up-to-date check)

``v/<label>/objects.json`` is a JSON object: each file the version had when mkdocs
rendered it that now lies in ``objects/``, by its path from the version's root (as the
version's pages name it, e.g. ``reports/<name>/downloads/records.jsonl.gz``) → its path
from the site root (``objects/<sha256>/records.jsonl.gz``). A reader fetching a version's
file looks its path up in the map and fetches the object path, else the plain path
``v/<label>/<path>``. Versions published before objects existed have no map: every file
lies under ``v/<label>/``.

Beside the site (``sitegen.publish.release`` switches it)::

    site -> .site.releases/<n>      the site is a relative symlink to a complete release
    .site.releases/<n>/             releases, numbered in the order they were made; only
                                    the current one stays once a build has finished
    .site.releases/staging-<pid>/   a build in progress (docs, mkdocs.yml, site/)
    .site.releases/link-<pid>       the next symlink, before it replaces ``site``
    .site.lock                      held by the build that is publishing
"""

VERSIONS_DIR = "v"
LATEST_ALIAS = "latest"
VERSION_MANIFEST = ".sitegen-version.json"
BUILD_MARKER = ".sitegen-build.json"
VERSIONS_FILE = "versions.json"
CHANGELOG_PAGE = "changelog"
SITEMAP_ARCHIVE = "sitemap.xml.gz"
"""mkdocs writes it beside ``sitemap.xml`` for search engines; versions do not keep it."""
OBJECTS_DIR = "objects"
"""Site-root folder of the content-addressed files versions share."""
OBJECT_MAP = "objects.json"
"""A version's map of its files moved to ``objects/``."""
THEME_ASSETS = "assets"
"""A version's folder of the theme's scripts, styles and images (one object)."""
SHARED_ASSETS = "assets"
"""Site-root folder of the files shared by every version."""
VERSION_TO_ROOT = "../../"
"""From a version's root (``v/<label>/``) to the site root."""
RELEASES_SUFFIX = ".releases"
"""``.<site name><suffix>`` beside the site holds its releases."""
LOCK_SUFFIX = ".lock"
"""``.<site name><suffix>`` beside the site is the publishing build's lock."""
