/*
 * load_dom.c - walking the libxml2 tree after validation.
 *
 * The schema has already checked structure, so these helpers only skip the
 * nodes it ignores (whitespace text, comments, processing instructions) and
 * copy strings out of libxml2's allocator into talloc.
 */
#include <string.h>

#include <talloc.h>

#include "load_internal.h"

static xmlNodePtr cg_dom_skip(xmlNodePtr node)
{
    while (node != NULL && node->type != XML_ELEMENT_NODE)
        node = node->next;
    return node;
}

xmlNodePtr cg_dom_first(xmlNodePtr parent)
{
    return cg_dom_skip(parent->children);
}

xmlNodePtr cg_dom_next(xmlNodePtr node)
{
    return cg_dom_skip(node->next);
}

bool cg_dom_is(xmlNodePtr node, const char *name)
{
    return node != NULL && strcmp((const char *)node->name, name) == 0;
}

size_t cg_dom_count(xmlNodePtr parent, const char *name)
{
    size_t n = 0;
    for (xmlNodePtr c = cg_dom_first(parent); c != NULL; c = cg_dom_next(c)) {
        if (cg_dom_is(c, name))
            n++;
    }
    return n;
}

int cg_dom_line(xmlNodePtr node)
{
    /* the exact line recorded while parsing (see load_xml.c) */
    uintptr_t recorded = (uintptr_t)node->_private;
    if (node->type == XML_ELEMENT_NODE && recorded > 0 && recorded <= INT32_MAX)
        return (int)recorded;
    long line = xmlGetLineNo(node);
    return line > 0 && line < (long)INT32_MAX ? (int)line : 0;
}

bool cg_dom_has(xmlNodePtr node, const char *name)
{
    /* no namespace: the model format does not use any */
    return xmlHasNsProp(node, (const xmlChar *)name, NULL) != NULL;
}

char *cg_dom_prop(void *mem_ctx, xmlNodePtr node, const char *name)
{
    xmlChar *value = xmlGetNoNsProp(node, (const xmlChar *)name);
    if (value == NULL)
        return NULL;
    char *copy = talloc_strdup(mem_ctx, (const char *)value);
    xmlFree(value);
    return copy;
}

char *cg_dom_text(void *mem_ctx, xmlNodePtr node)
{
    xmlChar *value = xmlNodeGetContent(node);
    if (value == NULL)
        return talloc_strdup(mem_ctx, "");
    char *copy = talloc_strdup(mem_ctx, (const char *)value);
    xmlFree(value);
    return copy;
}
