"""A submission's markdown and outputs, made safe to show as HTML (grader security, issue #33).

Formgrader's submission page runs in the instructor's Jupyter server: a script there can open a terminal (code as
the instructor, outside any sandbox) or change grades through formgrader's API. The feedback page opens in the
learner's browser. The learner controls every markdown cell and every output of the notebook: the kernel is theirs,
so it can send any display message, with any MIME type and metadata. nbconvert's ``HTMLExporter.sanitize_html`` is
off by default, and nbgrader's formgrade and feedback templates render markdown cells without ``clean_html`` even
when it is on. Two layers, both installed by ``rlprep.grading.release.apply_grading_config``:

1. ``SanitizeSubmission`` runs in ``Autograde.autograde_preprocessors`` right after the grading kernel, so the
   notebook nbgrader writes to ``autograded/`` (what formgrader, generate_feedback and exports render) holds no
   active content (``clean_notebook``).
2. Every ``HTMLExporter`` built from the course config (formgrader's submission page, generate_feedback) runs the
   same preprocessor again as it renders (a notebook graded before this layer existed, or edited in place), with
   nbconvert's ``sanitize_html`` on (its templates clean HTML and markdown outputs and drop JavaScript and widget
   outputs), its ``clean_html`` filter replaced by ``clean_html`` here (nbconvert's escapes every table tag), and
   ``strip_files_prefix``, which every HTML template applies right after ``markdown2html``, followed by
   ``clean_html``: markdown cells in nbgrader's templates.

What stays: plain markdown, LaTeX (MathJax input), markdown and HTML tables (pandas'), PNG/JPEG images, inline
SVG plots without script, links to http(s)/mailto/#anchors. What goes: scripts, event handlers, ``javascript:``
and other non-web URLs, frames, objects, forms, meta/base/link tags, CSS beyond a few text properties (no
``url()``), JavaScript and widget outputs, MathJax's ``\\href``/``\\url``/``\\class``/``\\style``/``\\cssId``/
``\\require``. A markdown cell with raw HTML or a non-web link is replaced by its rendering, cleaned.
"""

from __future__ import annotations

import html as html_lib
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit
from xml.etree import ElementTree

import nbformat

ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var",
})
_GLOBAL_ATTRIBUTES = frozenset({"class", "title", "lang", "dir"})
_TAG_ATTRIBUTES = {
    "img": {"alt", "width", "height"}, "td": {"colspan", "rowspan", "align", "valign"},
    "th": {"colspan", "rowspan", "align", "valign", "scope"}, "table": {"border", "align"}, "tr": {"align"},
    "ol": {"start", "type"}, "li": {"value"}, "details": {"open"}, "col": {"span"}, "colgroup": {"span"},
    "abbr": set(), "a": {"rel"},
}
_STYLED = frozenset({"span", "div", "p", "table", "thead", "tbody", "tr", "td", "th", "code", "pre"})
# Text and table looks only: nothing that positions, overlays or loads (no position, z-index, url()).
CSS_PROPERTIES = frozenset({
    "color", "background-color", "text-align", "vertical-align", "font-weight", "font-style", "font-size",
    "font-family", "text-decoration", "white-space", "border", "border-collapse", "border-color", "border-style",
    "border-width", "border-top", "border-bottom", "border-left", "border-right", "border-spacing", "padding",
    "padding-top", "padding-bottom", "padding-left", "padding-right", "width", "height", "max-width", "min-width",
})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif);base64,[a-z0-9+/=]*")  # on a normalised (lower-case) URL
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_CSS_ACTIVE = re.compile(r"url\(|expression|@import|javascript:|behavior|-moz-binding|\\", re.I)
# MathJax turns these into links, classes, styles or module loads, in prose and in HTML/LaTeX outputs.
_MATHJAX_ACTIVE = re.compile(r"\\(href|url|class|cssId|style|require)(?![A-Za-z])")
_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b", re.I)
MAX_MARKDOWN = 20_000  # characters of one markdown cell rendered; a longer one is shown as source (labs: < 8,000)
# Characters of markdown and HTML one notebook may have rendered and cleaned (a pathological 20,000-character cell
# takes mistune up to 0.5 s); past it, markdown is shown as source and HTML outputs are dropped, with a note.
MAX_CLEANED = 150_000
NOTE = "[rlprep] HTML was removed from this cell for display: only safe tags, attributes and links are kept."


# -- URLs and attributes ------------------------------------------------------------------------------------------
def _normalised_url(value: str) -> str:
    """``value`` as a browser reads its scheme: entities decoded, whitespace, control and non-ASCII characters
    dropped, lower case (``java&#09;script:`` is ``javascript:``)."""
    text = html_lib.unescape(str(value))
    return re.sub(r"[^\x21-\x7e]|`", "", text).lower()


def _scheme(url: str) -> str:
    try:
        return urlsplit(url).scheme
    except ValueError:
        return "invalid"


def safe_link(value: str) -> bool:
    """An ``href`` a page may keep: http(s), mailto, an anchor on the same page, or a relative link to a notebook
    (a lab's links to the walkthroughs). No other relative link: formgrader serves the submission's other files
    from the instructor's origin, so a learner's ``page.html`` or ``drawing.svg`` would run there when clicked."""
    url = _normalised_url(value)
    scheme = _scheme(url)
    if url.startswith("#") or scheme in ("http", "https", "mailto"):
        return True
    return scheme == "" and not url.startswith("//") and urlsplit(url).path.endswith(".ipynb")


def safe_image(value: str) -> bool:
    """An image ``src`` a page may keep: http(s), a relative path, or PNG/JPEG/GIF data."""
    url = _normalised_url(value)
    scheme = _scheme(url)
    return scheme in ("http", "https") or (scheme == "" and ":" not in url.split("/")[0]) or bool(
        _IMAGE_DATA.fullmatch(url))


def _plain_css(value: str) -> bool:
    return not _CSS_ACTIVE.search(re.sub(r"/\*.*?\*/", "", str(value), flags=re.S))


def allowed_attribute(tag: str, name: str, value: str) -> bool:
    """bleach's attribute filter: which ``name="value"`` a ``tag`` keeps."""
    if name in _GLOBAL_ATTRIBUTES:
        return True
    if name == "href":
        return tag == "a" and safe_link(value)
    if name == "src":
        return tag == "img" and safe_image(value)
    if name == "style":
        return tag in _STYLED and _plain_css(value)
    if name == "id":  # nbconvert's heading anchors; no id elsewhere (a learner's id could shadow the page's globals)
        return tag in _HEADINGS
    return name in _TAG_ATTRIBUTES.get(tag, ())


# -- HTML -----------------------------------------------------------------------------------------------------------
_cleaner = None


def _bleach():
    global _cleaner
    if _cleaner is None:
        import bleach
        from bleach.css_sanitizer import CSSSanitizer

        _cleaner = bleach.Cleaner(tags=ALLOWED_TAGS, attributes=allowed_attribute,
                                  protocols={"http", "https", "mailto", "data"}, strip=True, strip_comments=True,
                                  css_sanitizer=CSSSanitizer(allowed_css_properties=CSS_PROPERTIES))
    return _cleaner


def _drop_script_and_style(html: str) -> str:
    """``html`` without the contents of script and style elements (bleach removes the tags and keeps their text,
    which would show pandas' CSS as prose). Cosmetic: bleach makes the result safe. Linear in ``len(html)``."""
    lower, parts, pos = html.lower(), [], 0
    while (found := _SCRIPT_OR_STYLE.search(html, pos)) is not None:
        end = lower.find(f"</{found.group(1).lower()}", found.end())
        if end < 0:
            break
        close = lower.find(">", end)
        parts.append(html[pos:found.start()])
        pos = len(html) if close < 0 else close + 1
    return "".join(parts) + html[pos:]


def inert_math(text: str) -> str:
    r"""``text`` with MathJax's active commands shown as text: ``\href`` becomes ``\backslash{}href``."""
    return _MATHJAX_ACTIVE.sub(r"\\backslash{}\1", text)


def clean_html(html) -> str:
    """``html`` through an allow-list (bleach): safe tags, attributes, URLs and CSS only; MathJax made inert."""
    html = html.decode() if isinstance(html, bytes) else str(html)
    return inert_math(_bleach().clean(_drop_script_and_style(html)))


def clean_markdown_html(html) -> str:
    """nbconvert's ``strip_files_prefix`` filter, then ``clean_html``: what markdown cells render to (layer 2)."""
    from nbconvert.filters.strings import strip_files_prefix

    return clean_html(strip_files_prefix(html))


class _StartTags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(sorted(name for name, _ in attrs))))


def _start_tags(html: str) -> list:
    parser = _StartTags()
    parser.feed(html)
    parser.close()
    return parser.tags


# -- markdown -------------------------------------------------------------------------------------------------------
def markdown_html(source: str, attachments=None) -> str:
    """``source`` rendered as nbconvert renders a markdown cell (math kept for MathJax, attachments inlined)."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    return MarkdownWithMath(renderer=IPythonRenderer(escape=False, attachments=attachments or {})).render(source)


def _active_markdown(tokens) -> bool:
    """True when mistune's tokens hold raw HTML, or a link or image whose URL a page may not keep."""
    for token in tokens:
        kind, url = token.get("type"), token.get("attrs", {}).get("url", "")
        if kind in ("block_html", "inline_html"):
            return True
        if kind == "link" and not safe_link(url):
            return True
        if kind == "image" and not (safe_image(url) or str(url).startswith("attachment:")):
            return True
        if _active_markdown(token.get("children", ())):
            return True
    return False


def _as_code(source: str, note: str = NOTE) -> str:
    """``source`` as a fenced code block (longer fence than any backtick run in it), after ``note``."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", source)), default=0))
    return f"{note} Its source:\n\n{fence}text\n{source}\n{fence}"


class Budget:
    """Characters of markdown and HTML a notebook may still have cleaned (``MAX_CLEANED``)."""

    def __init__(self, chars: int = MAX_CLEANED):
        self.left = chars

    def take(self, text: str) -> bool:
        self.left -= len(text)
        return self.left >= 0


def clean_markdown(source: str, attachments=None, budget: Budget | None = None) -> str:
    """A markdown cell's source that renders without active content; ``source`` itself when it already does.

    Markdown without raw HTML or non-web links stays as it is (tables, LaTeX, code). Otherwise the cell becomes its
    rendering through ``clean_html``, one line inside a ``<div>`` (an HTML block that markdown passes through
    verbatim, checked by rendering it again); failing that, past ``MAX_MARKDOWN`` or past the notebook's
    ``budget``, its source as a code block.
    """
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    source = str(source)
    if len(source) > MAX_MARKDOWN:
        return _as_code(source[:MAX_MARKDOWN], f"[rlprep] this cell is longer than {MAX_MARKDOWN} characters.")
    if budget is not None and not budget.take(source):
        return _as_code(source, "[rlprep] this notebook has more markdown and HTML than grading renders.")
    source = inert_math(source)
    try:
        tokens = MarkdownWithMath(renderer=None)(source)
        rendered = markdown_html(source, attachments)
    except Exception:  # markdown the renderer cannot take (a missing attachment): shown as text
        return _as_code(source)
    if not _active_markdown(tokens) and not _MATHJAX_ACTIVE.search(html_lib.unescape(rendered)):
        return source
    cleaned = clean_html(rendered)
    if _start_tags(cleaned) != _start_tags(rendered):
        cleaned = f"<p><em>{NOTE}</em></p>{cleaned}"
    block = '<div class="rlprep-sanitized">' + cleaned.replace("\r", "&#13;").replace("\n", "&#10;") + "</div>"
    try:
        passes_through = markdown_html(block).strip() == block
    except Exception:
        passes_through = False
    return block if passes_through else _as_code(source)


def _clean_attachments(attachments) -> dict:
    """A markdown cell's attachments: PNG/JPEG/GIF images in base64 only."""
    kept = {}
    for name, bundle in (attachments or {}).items():
        images = {mime: data for mime, data in (bundle or {}).items()
                  if mime in ("image/png", "image/jpeg", "image/gif") and isinstance(data, str)
                  and _BASE64.fullmatch(data)}
        if images:
            kept[str(name)] = images
    return kept


# -- SVG ------------------------------------------------------------------------------------------------------------
SVG_ELEMENTS = frozenset({
    "svg", "g", "defs", "symbol", "use", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text",
    "tspan", "textPath", "clipPath", "mask", "pattern", "marker", "linearGradient", "radialGradient", "stop", "title",
    "desc", "metadata", "style", "image",
})


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def svg_is_inert(svg: str) -> bool:
    """True when an SVG document has only drawing elements (metadata aside), no event handler, and refers to
    nothing outside itself but PNG/JPEG data images. Matplotlib's SVG plots pass."""
    try:
        root = ElementTree.fromstring(svg)
    except (ElementTree.ParseError, ValueError):
        return False
    return _svg_inert(root)


def _svg_inert(element, in_metadata: bool = False) -> bool:
    name = _local(element.tag) if isinstance(element.tag, str) else ""
    if not in_metadata and name not in SVG_ELEMENTS:
        return False
    for attr, value in element.attrib.items():
        attr = _local(attr).lower()
        if attr.startswith("on") or re.search(r"url\(\s*['\"]?\s*[^#'\"\s]", value) or "javascript:" in value.lower():
            return False
        if attr == "href" and not (value.strip().startswith("#")
                                   or (name == "image" and _IMAGE_DATA.fullmatch(_normalised_url(value)))):
            return False
    if name == "style" and not in_metadata and not _plain_css(re.sub(r"url\(\s*#[^)]*\)", "", element.text or "")):
        return False
    return all(_svg_inert(child, in_metadata or name == "metadata") for child in element)


# -- outputs and notebooks ------------------------------------------------------------------------------------------
def _text(value) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return value if isinstance(value, str) else None


def _clean_data(data: dict, budget: Budget) -> dict:
    """A display's MIME bundle with only what renders inert: see the module docstring."""
    kept, removed = {}, []
    for mime, value in (data or {}).items():
        text = _text(value)
        if text is None or (mime in ("text/html", "text/markdown", "image/svg+xml") and not budget.take(text)):
            removed.append(mime)
        elif mime == "text/plain":
            kept[mime] = text
        elif mime in ("image/png", "image/jpeg") and _BASE64.fullmatch(text):
            kept[mime] = text
        elif mime == "text/html":
            kept[mime] = clean_html(text)
        elif mime == "text/markdown" and clean_markdown(text, budget=budget) == text:
            kept[mime] = text
        elif mime == "text/markdown":
            kept.setdefault("text/html", clean_html(markdown_html(text[:MAX_MARKDOWN])))
        elif mime == "text/latex":
            kept[mime] = inert_math(text)
        elif mime == "image/svg+xml" and svg_is_inert(text):
            kept[mime] = text
        else:
            removed.append(mime)
    if removed and not kept:
        kept["text/plain"] = f"[rlprep] output removed for display: {', '.join(map(str, removed))}"
    return kept


def _clean_metadata(metadata: dict) -> dict:
    """An output's metadata: numeric image sizes only (nbconvert writes ``width=`` unquoted)."""
    kept = {}
    for mime in ("image/png", "image/jpeg"):
        sizes = (metadata or {}).get(mime)
        if isinstance(sizes, dict):
            dims = {k: v for k, v in sizes.items() if k in ("width", "height")
                    and isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 100_000}
            if dims:
                kept[mime] = dims
    return kept


def clean_output(output, budget: Budget | None = None) -> nbformat.NotebookNode | None:
    """One output rebuilt from its allowed fields (None for an output type nbformat does not define)."""
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return nbformat.v4.new_output("stream", name=name, text=_text(output.get("text")) or "")
    if kind == "error":
        traceback = output.get("traceback")
        lines = [str(line) for line in traceback] if isinstance(traceback, list) else []
        return nbformat.v4.new_output("error", ename=str(output.get("ename", "")),
                                      evalue=str(output.get("evalue", "")), traceback=lines)
    if kind in ("display_data", "execute_result"):
        fields = {"data": _clean_data(output.get("data"), budget or Budget()),
                  "metadata": _clean_metadata(output.get("metadata"))}
        if kind == "execute_result":
            count = output.get("execution_count")
            fields["execution_count"] = count if isinstance(count, int) and not isinstance(count, bool) else None
        return nbformat.v4.new_output(kind, **fields)
    return None


def clean_notebook(nb):
    """Every markdown cell, raw HTML cell and output of ``nb`` made inert, in place; returns ``nb``."""
    budget = Budget()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if "attachments" in cell:
                cell.attachments = _clean_attachments(cell.attachments)
            cell.source = clean_markdown(cell.source, cell.get("attachments"), budget)
        elif cell.cell_type == "raw" and str(cell.metadata.get("raw_mimetype", "")).lower() in ("", "text/html"):
            cell.source = clean_html(cell.source) if budget.take(cell.source) else ""
        elif cell.cell_type == "code":
            outputs = (clean_output(out, budget) for out in cell.get("outputs", []))
            cell.outputs = [out for out in outputs if out is not None]
    nb.metadata.pop("widgets", None)  # widget state: rendered as a script block by nbconvert
    return nb


try:  # the nbconvert preprocessor; nbconvert comes with the course extras (nbgrader)
    from nbconvert.preprocessors import Preprocessor
    from traitlets import Bool
except ImportError:  # pragma: no cover - plain install without the course extras
    Preprocessor = None

if Preprocessor is not None:

    class SanitizeSubmission(Preprocessor):
        """``clean_notebook`` as an nbconvert/nbgrader preprocessor (both layers: see the module docstring)."""

        enabled = Bool(True).tag(config=True)

        def preprocess(self, nb, resources):
            return clean_notebook(nb), resources


def configure_exporters(c) -> None:
    """Layer 2 on an nbgrader config ``c``: what every HTMLExporter built from it does (see the module docstring)."""
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.preprocessors = ["rlprep.grading.sanitize.SanitizeSubmission"]
    c.HTMLExporter.filters = {"clean_html": "rlprep.grading.sanitize.clean_html",
                              "strip_files_prefix": "rlprep.grading.sanitize.clean_markdown_html"}
