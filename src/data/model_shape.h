/* A transformer's shape: what data/models.json's presets hold and what `gpuvet estimate`
 * and `bench train` compute from. Declared in data/ so that the table's loader
 * (data/modeldb.c) needs nothing from estimate/, the layer above that reads it. */
#pragma once

#include <stdbool.h>

enum est_mlp {
        EST_MLP_GATED, /* SwiGLU: gate, up and down projections, 3 h ffn weights (Llama, Mistral, Qwen) */
        EST_MLP_PLAIN, /* two projections, 2 h ffn weights (GPT-2/3, Megatron-LM) */
        _EST_MLP_COUNT,
        _EST_MLP_INVALID = -1,
};

struct est_model {
        unsigned layers, hidden, ffn, heads, kv_heads, vocab;
        enum est_mlp mlp;
        bool tied_embeddings;   /* the output layer reuses the input embedding (GPT-2/3) */
        bool learned_positions; /* a max_seq x hidden position table (GPT-2/3) */
        unsigned max_seq;       /* for the position table; 0 when unknown */
        unsigned sliding_window; /* each token attends to at most this many (Mistral 7B v0.1: 4096),
                                  * so the KV cache holds no more; 0: the whole sequence */
        unsigned experts, experts_per_token; /* MoE: experts per layer, routed per token; 0 = dense */
        double params_override; /* --params: use this count instead of the shape's; 0 = from the shape */
};

const char *est_mlp_name(enum est_mlp m);
enum est_mlp est_mlp_from_name(const char *s);
