/*
 * load_xml.c - parsing a model file with libxml2 and validating it against
 * the embedded RelaxNG schema.
 *
 * Model files come from elsewhere, so the parser is locked down: no network,
 * no DTD loading, no entity substitution, and any DOCTYPE stops the parse the
 * moment it is seen, before an internal subset could declare entities. Errors
 * arrive through per-context structured handlers (never libxml2's global
 * ones) and only the first is reported, with the model's path and line.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/SAX2.h>
#include <talloc.h>

#include "embedded.h"
#include "load_internal.h"

#define CG_SCHEMA_NAME "coreai-model.rng"

/* The first XML error, kept until it can go into the diag. */
typedef struct cg_xml_error {
    bool have;
    /* libxml2's RelaxNG validator says "failed to compare type string" for a
     * value outside an enumeration, then "Element X failed to validate
     * attributes", sometimes without a node. The first carries the line, the
     * second the useful text, so the first is held as provisional. */
    bool provisional;
    int line;
    char message[512];
} cg_xml_error;

static void cg_xml_error_set(cg_xml_error *err, int line, const char *message)
{
    if (message == NULL || message[0] == '\0')
        message = "unknown XML error";
    snprintf(err->message, sizeof(err->message), "%s", message);
    /* libxml2 messages end in a newline */
    size_t n = strlen(err->message);
    while (n > 0 && (err->message[n - 1] == '\n' || err->message[n - 1] == '\r' ||
                     err->message[n - 1] == ' '))
        err->message[--n] = '\0';
    if (line > 0)
        err->line = line;
    err->have = true;
}

static int cg_xml_error_line(const xmlError *e)
{
    xmlNodePtr node = e->node;
    if (node != NULL && node->type == XML_ELEMENT_NODE) {
        int line = cg_dom_line(node);
        if (line > 0)
            return line;
    }
    return e->line;
}

static void cg_xml_error_take(cg_xml_error *err, const xmlError *e)
{
    if (err->have && !err->provisional)
        return;
    bool weak = e->domain == XML_FROM_RELAXNGV && e->code == XML_RELAXNG_ERR_TYPECMP;
    if (err->have && weak)
        return;
    cg_xml_error_set(err, cg_xml_error_line(e), e->message);
    err->provisional = weak;
}

/* ---- parsing ---- */

typedef struct cg_xml_parse {
    cg_xml_error error;
    bool doctype;
} cg_xml_parse;

/* Parser callbacks get the parser context; our state hangs off _private. */
static void cg_xml_on_parse_error(void *ctx, xmlErrorPtr e)
{
    xmlParserCtxtPtr pctxt = ctx;
    cg_xml_parse *state = pctxt->_private;
    if (state == NULL || e == NULL || e->level == XML_ERR_WARNING)
        return;
    cg_xml_error_take(&state->error, e);
}

static void cg_xml_on_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                              const xmlChar *system_id)
{
    (void)name;
    (void)external_id;
    (void)system_id;
    xmlParserCtxtPtr pctxt = ctx;
    cg_xml_parse *state = pctxt->_private;
    if (state != NULL && !state->error.have) {
        cg_xml_error_set(&state->error, xmlSAX2GetLineNumber(ctx),
                         "DOCTYPE declarations are not allowed in a model file");
        state->doctype = true;
    }
    xmlStopParser(pctxt);
}

/* libxml2 2.9 keeps element lines in 16 bits; past 65535 xmlGetLineNo()
 * guesses from neighbouring text nodes and can be off. Converted models
 * easily get that long, so each element records its exact line in
 * _private (which libxml2 leaves to applications) as it is created. */
static void cg_xml_on_start_element(void *ctx, const xmlChar *localname,
                                    const xmlChar *prefix, const xmlChar *uri,
                                    int nb_namespaces, const xmlChar **namespaces,
                                    int nb_attributes, int nb_defaulted,
                                    const xmlChar **attributes)
{
    xmlParserCtxtPtr pctxt = ctx;
    xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces,
                          nb_attributes, nb_defaulted, attributes);
    /* a node that already has a line is the parent: creation failed */
    xmlNodePtr node = pctxt->node;
    if (node != NULL && node->type == XML_ELEMENT_NODE && node->_private == NULL)
        node->_private = (void *)(uintptr_t)xmlSAX2GetLineNumber(ctx);
}

typedef struct cg_xml_doc_owner {
    xmlDocPtr doc;
} cg_xml_doc_owner;

static int cg_xml_doc_owner_destroy(cg_xml_doc_owner *owner)
{
    xmlFreeDoc(owner->doc);
    return 0;
}

xmlDocPtr cg_load_xml_parse(cg_load *load)
{
    size_t size = 0;
    int error = 0;
    uint64_t file_size = 0;
    /* libxml2 takes an int length */
    uint64_t max = load->max_model_size < (uint64_t)INT_MAX ? load->max_model_size : (uint64_t)INT_MAX;
    char *text = (char *)cg_load_file_read(load->scratch, load->path, max, &size, &error, &file_size);
    if (text == NULL && error == CG_FILE_TOO_LARGE) {
        cg_load_error(load, 0, "model file is too large (%llu bytes; the limit is %llu, see --max-model-size)",
                      (unsigned long long)file_size, (unsigned long long)max);
        return NULL;
    }
    if (text == NULL) {
        cg_load_error(load, 0, "cannot read model file: %s", cg_load_file_problem(error));
        return NULL;
    }
    if (size > INT_MAX) {
        cg_load_error(load, 0, "model file is too large (%zu bytes)", size);
        return NULL;
    }

    cg_xml_doc_owner *owner = talloc_zero(load->scratch, cg_xml_doc_owner);
    xmlParserCtxtPtr pctxt = owner != NULL ? xmlNewParserCtxt() : NULL;
    if (pctxt == NULL) {
        cg_load_oom(load);
        return NULL;
    }
    talloc_set_destructor(owner, cg_xml_doc_owner_destroy);

    cg_xml_parse state = {0};
    pctxt->_private = &state;
    pctxt->sax->serror = cg_xml_on_parse_error;
    pctxt->sax->internalSubset = cg_xml_on_doctype;
    pctxt->sax->startElementNs = cg_xml_on_start_element;

    /* Deliberately absent: XML_PARSE_NOENT (entity substitution),
     * XML_PARSE_DTDLOAD, XML_PARSE_DTDATTR, XML_PARSE_DTDVALID, XINCLUDE. */
    int options = XML_PARSE_NONET | XML_PARSE_BIG_LINES;
    xmlDocPtr doc = xmlCtxtReadMemory(pctxt, text, (int)size, load->path, NULL, options);
    bool well_formed = pctxt->wellFormed != 0;
    xmlFreeParserCtxt(pctxt);
    owner->doc = doc;

    if (state.error.have || state.doctype || doc == NULL || !well_formed) {
        if (state.error.have)
            cg_load_error(load, state.error.line, "%s", state.error.message);
        else
            cg_load_error(load, 0, "not a well-formed XML document");
        return NULL;
    }
    /* belt and braces: the callback should have caught every DOCTYPE */
    if (doc->intSubset != NULL || doc->extSubset != NULL) {
        cg_load_error(load, 0, "DOCTYPE declarations are not allowed in a model file");
        return NULL;
    }
    return doc;
}

/* ---- validation ---- */

static void cg_xml_on_schema_error(void *data, xmlErrorPtr e)
{
    if (e != NULL && e->level != XML_ERR_WARNING)
        cg_xml_error_take(data, e);
}

static xmlRelaxNGPtr cg_xml_schema_compile(cg_load *load)
{
    const cg_embedded_file *file = cg_embedded_find(CG_SCHEMA_NAME);
    if (file == NULL || file->size == 0 || file->size > INT_MAX) {
        cg_load_error(load, 0, "internal error: schema %s is not embedded", CG_SCHEMA_NAME);
        return NULL;
    }
    xmlRelaxNGParserCtxtPtr pctxt = xmlRelaxNGNewMemParserCtxt(file->data, (int)file->size);
    if (pctxt == NULL) {
        cg_load_oom(load);
        return NULL;
    }
    cg_xml_error err = {0};
    xmlRelaxNGSetParserStructuredErrors(pctxt, cg_xml_on_schema_error, &err);
    xmlRelaxNGPtr schema = xmlRelaxNGParse(pctxt);
    xmlRelaxNGFreeParserCtxt(pctxt);
    if (schema == NULL) {
        cg_load_error(load, 0, "internal error: embedded schema %s: %s", CG_SCHEMA_NAME,
                      err.have ? err.message : "does not compile");
    }
    return schema;
}

/* libxml2 reports a value outside an enumeration as "Element X failed to
 * validate attributes", without saying which one. The enumerated attributes
 * are checked here first so the message names the attribute and the choices. */
#define CG_DTYPE_CHOICES "f32 f16 bf16 i64 i32 bool i8 u8 i4 u4 u1 u2 u6"

static bool cg_xml_check_enums(cg_load *load, xmlNodePtr node)
{
    static const struct {
        const char *element, *attribute, *choices;
    } enums[] = {
        {"coreai-model", "format", "1 2 3"},
        {"arg", "dtype", CG_DTYPE_CHOICES},
        {"const", "dtype", CG_DTYPE_CHOICES},
        {"result", "dtype", CG_DTYPE_CHOICES},
        {"attr", "type", "si64 f32 f64 bool str si64[] f32[] str[] dim dim[]"},
    };
    for (xmlNodePtr n = node; n != NULL; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        for (size_t i = 0; i < sizeof enums / sizeof enums[0]; i++) {
            if (!cg_dom_is(n, enums[i].element) || !cg_dom_has(n, enums[i].attribute))
                continue;
            char *v = cg_dom_prop(load->scratch, n, enums[i].attribute);
            if (v == NULL)
                return cg_load_oom(load);
            bool found = false;
            const char *c = enums[i].choices;
            size_t len = strlen(v);
            while (*c && !found) {
                size_t w = strcspn(c, " ");
                found = w == len && strncmp(c, v, w) == 0;
                c += w + (c[w] == ' ');
            }
            if (!found) {
                cg_load_error(load, cg_dom_line(n), "unknown %s '%s' on <%s> (expected one of: %s)",
                              enums[i].attribute, v, enums[i].element, enums[i].choices);
                return false;
            }
        }
        if (!cg_xml_check_enums(load, n->children))
            return false;
    }
    return true;
}

/* A format number this generator does not know is named before anything
 * else is checked: the rest of the file is written for another reader. */
static bool cg_xml_check_format(cg_load *load, xmlNodePtr root)
{
    if (root == NULL || !cg_dom_is(root, "coreai-model") || !cg_dom_has(root, "format"))
        return true; /* the schema's message */
    char *v = cg_dom_prop(load->scratch, root, "format");
    if (v == NULL)
        return cg_load_oom(load);
    uint64_t n;
    if (cg_parse_u64(v, &n) == CG_NUM_OK && n > CG_FORMAT_NEWEST) {
        cg_load_error(load, cg_dom_line(root), "model format %s is newer than this coreai-gen reads (formats 1 to "
                      "%d): update coreai-gen (or convert the model with the converter that matches it)", v,
                      CG_FORMAT_NEWEST);
        return false;
    }
    if (cg_parse_u64(v, &n) == CG_NUM_OK && n == 0) {
        cg_load_error(load, cg_dom_line(root), "model format 0 does not exist (formats are 1 to %d)",
                      CG_FORMAT_NEWEST);
        return false;
    }
    return true;
}

bool cg_load_xml_validate(cg_load *load, xmlDocPtr doc)
{
    if (!cg_xml_check_format(load, xmlDocGetRootElement(doc)))
        return false;
    if (!cg_xml_check_enums(load, xmlDocGetRootElement(doc)))
        return false;
    xmlRelaxNGPtr schema = cg_xml_schema_compile(load);
    if (schema == NULL)
        return false;
    xmlRelaxNGValidCtxtPtr vctxt = xmlRelaxNGNewValidCtxt(schema);
    if (vctxt == NULL) {
        xmlRelaxNGFree(schema);
        return cg_load_oom(load);
    }
    cg_xml_error err = {0};
    xmlRelaxNGSetValidStructuredErrors(vctxt, cg_xml_on_schema_error, &err);
    int rc = xmlRelaxNGValidateDoc(vctxt, doc);
    xmlRelaxNGFreeValidCtxt(vctxt);
    xmlRelaxNGFree(schema);

    if (rc == 0)
        return true;
    if (err.have)
        cg_load_error(load, err.line, "%s", err.message);
    else
        cg_load_error(load, 0, "the document does not match the model schema");
    return false;
}
