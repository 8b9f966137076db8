/* exporter-toolkit's web configuration, read with libyaml's document loader (web_config.h). */
#include "serve/web_config.h"
#include "core/yaml_lib.h"
#include "core/yaml_nesting.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct parse {
        const struct yaml_lib *y;
        yaml_document_t *doc;
        const char *dir;
        char *err;
        size_t errsize;
};

static int fail(struct parse *p, const yaml_node_t *n, const char *what) {
        snprintf(p->err, p->errsize, "line %lu: %s", n ? (unsigned long)n->start_mark.line + 1 : 0UL, what);
        return -EINVAL;
}

static const char *scalar(const yaml_node_t *n) {
        return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int path_value(struct parse *p, const yaml_node_t *n, const char *key, char **ret) {
        const char *v = scalar(n);
        char what[96];
        if (!v || !*v) {
                snprintf(what, sizeof(what), "%s is not a file name", key);
                return fail(p, n, what);
        }
        if (v[0] == '/' || !p->dir)
                *ret = strdup(v);
        else if (asprintf(ret, "%s/%s", p->dir, v) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

static int tls_section(struct parse *p, yaml_node_t *map, struct web_config *c) {
        if (map->type != YAML_MAPPING_NODE)
                return fail(p, map, "tls_server_config is not a mapping");
        for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
                yaml_node_t *k = p->y->yaml_document_get_node(p->doc, pr->key);
                yaml_node_t *v = p->y->yaml_document_get_node(p->doc, pr->value);
                const char *key = scalar(k);
                if (key && strcmp(key, "min_version") == 0) {
                        const char *mv = scalar(v);
                        if (c->tls_min_version)
                                return fail(p, k, "tls_server_config: a key given twice");
                        if (mv && strcmp(mv, "TLS12") == 0)
                                c->tls_min_version = 12;
                        else if (mv && strcmp(mv, "TLS13") == 0)
                                c->tls_min_version = 13;
                        else
                                return fail(p, v, "tls_server_config: min_version is TLS12 or TLS13 (TLS 1.0 and 1.1 "
                                                  "are not offered)");
                        continue;
                }
                char **slot = key && strcmp(key, "cert_file") == 0 ? &c->cert_file
                              : key && strcmp(key, "key_file") == 0 ? &c->key_file
                                                                     : NULL;
                if (!slot)
                        return fail(p, k, "tls_server_config: only cert_file, key_file and min_version are supported");
                if (*slot)
                        return fail(p, k, "tls_server_config: a key given twice");
                int r = path_value(p, v, key, slot);
                if (r < 0)
                        return r;
        }
        if (!c->cert_file || !c->key_file)
                return fail(p, map, "tls_server_config needs both cert_file and key_file");
        return 0;
}

static bool is_bcrypt(const char *h) {
        return strlen(h) == 60 && h[0] == '$' && h[1] == '2' && strchr("aby", h[2]) && h[3] == '$';
}

static int users_section(struct parse *p, yaml_node_t *map, struct web_config *c) {
        if (map->type != YAML_MAPPING_NODE)
                return fail(p, map, "basic_auth_users is not a mapping of user names to bcrypt hashes");
        size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
        c->users = calloc(n ? n : 1, sizeof(*c->users));
        if (!c->users)
                return -ENOMEM;
        for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
                yaml_node_t *k = p->y->yaml_document_get_node(p->doc, pr->key);
                yaml_node_t *v = p->y->yaml_document_get_node(p->doc, pr->value);
                const char *name = scalar(k), *hash = scalar(v);
                if (!name || !*name || strchr(name, ':'))
                        return fail(p, k, "basic_auth_users: a user name is empty, not text, or has a colon");
                if (!hash || !is_bcrypt(hash))
                        return fail(p, v, "basic_auth_users: a password hash is not bcrypt ($2a$, $2b$ or $2y$, 60 characters)");
                for (size_t i = 0; i < c->n_users; i++)
                        if (strcmp(c->users[i].name, name) == 0)
                                return fail(p, k, "basic_auth_users: a user named twice");
                c->users[c->n_users].name = strdup(name);
                c->users[c->n_users].hash = strdup(hash);
                if (!c->users[c->n_users].name || !c->users[c->n_users].hash) {
                        free(c->users[c->n_users].name);
                        free(c->users[c->n_users].hash);
                        return -ENOMEM;
                }
                c->n_users++;
        }
        return 0;
}

int web_config_parse(const char *buf, size_t len, const char *dir, struct web_config *ret, char *err,
                     size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        const struct yaml_lib *y = yaml_lib_load(err, errsize);
        if (!y)
                return -ENOENT;
        unsigned long deep_line = 0;
        int deep = yaml_nesting_check(y, buf, len, YAML_MAX_NESTING, &deep_line);
        if (deep == -E2BIG) {
                snprintf(err, errsize, "line %lu: nested deeper than %u levels", deep_line, YAML_MAX_NESTING);
                return -EINVAL;
        }
        if (deep < 0) {
                snprintf(err, errsize, "out of memory");
                return deep;
        }
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!y->yaml_parser_initialize(&parser))
                return -ENOMEM;
        y->yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
        if (!y->yaml_parser_load(&parser, &doc)) {
                snprintf(err, errsize, "line %lu: not YAML: %s", (unsigned long)parser.problem_mark.line + 1,
                         parser.problem ? parser.problem : "unknown error");
                y->yaml_parser_delete(&parser);
                return -EINVAL;
        }
        struct parse p = {.y = y, .doc = &doc, .dir = dir, .err = err, .errsize = errsize};
        int r = 0;
        yaml_node_t *root = y->yaml_document_get_root_node(&doc);
        if (!root) {
                r = fail(&p, NULL, "empty: give tls_server_config, basic_auth_users or both");
        } else if (root->type != YAML_MAPPING_NODE) {
                r = fail(&p, root, "not a mapping");
        } else {
                bool tls = false, users = false;
                for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; r == 0 && pr < root->data.mapping.pairs.top;
                     pr++) {
                        yaml_node_t *k = y->yaml_document_get_node(&doc, pr->key);
                        yaml_node_t *v = y->yaml_document_get_node(&doc, pr->value);
                        const char *key = scalar(k);
                        if (key && strcmp(key, "tls_server_config") == 0 && !tls) {
                                tls = true;
                                r = tls_section(&p, v, ret);
                        } else if (key && strcmp(key, "basic_auth_users") == 0 && !users) {
                                users = true;
                                r = users_section(&p, v, ret);
                        } else {
                                r = fail(&p, k, "only tls_server_config and basic_auth_users are supported, each once");
                        }
                }
        }
        y->yaml_document_delete(&doc);
        y->yaml_parser_delete(&parser);
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(err, errsize, "out of memory");
                web_config_done(ret);
        }
        return r;
}

void web_config_done(struct web_config *c) {
        free(c->cert_file);
        free(c->key_file);
        for (size_t i = 0; i < c->n_users; i++) {
                free(c->users[i].name);
                free(c->users[i].hash);
        }
        free(c->users);
        memset(c, 0, sizeof(*c));
}
