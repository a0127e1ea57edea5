"""Where things live in a published site (shared by the renderer and the publisher).

Layout of the site directory::

    index.html                      redirect to latest/
    404.html                        the newest version's (its links start at the site root)
    versions.json                   the version list in mike's format
    v/versions.json                 the same list where mkdocs-material's selector reads it
                                    (``../versions.json`` from a version's root)
    latest/…                        one redirect page per page of the newest version
    assets/…                        files shared by every version (plotly.js)
    v/<label>/…                     one complete bilingual site per version
    v/<label>/.sitegen-version.json that version's file hashes and headline figures
    .sitegen-build.json             the last build's marker (up-to-date check)

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
SHARED_ASSETS = "assets"
"""Site-root folder of the files shared by every version."""
VERSION_TO_ROOT = "../../"
"""From a version's root (``v/<label>/``) to the site root."""
RELEASES_SUFFIX = ".releases"
"""``.<site name><suffix>`` beside the site holds its releases."""
LOCK_SUFFIX = ".lock"
"""``.<site name><suffix>`` beside the site is the publishing build's lock."""
