/* Keys (top_screen.h, top_view_key): one table of what each does, docs/top.md "Keys". */
#include "top/top_screen.h"

#include <curses.h>
#include <signal.h>
#include <stdio.h>

bool top_view_key(struct top_view *v, const struct top_model *m, int key, unsigned int page) {
        if (v->confirm.active && key != KEY_RESIZE) {
                /* y sends; any other key, q too, only cancels: a stray key never kills */
                if (key == 'y' || key == 'Y')
                        (void)top_signal_send(v->signals, &v->confirm, v->status, sizeof(v->status));
                else
                        snprintf(v->status, sizeof(v->status), "%s not sent to PID %u",
                                 top_signal_name(v->confirm.sig), v->confirm.pid);
                v->confirm.active = false;
                return true;
        }
        if (key != KEY_RESIZE)
                v->status[0] = '\0';
        if (v->help && key != KEY_RESIZE) {
                /* Any key closes the help; q still quits. */
                v->help = false;
                return key != 'q' && key != 'Q';
        }
        switch (key) {
        case 'q':
        case 'Q': return false;
        case 27: v->have_selected = false; break; /* Esc: no selection, as in nvitop */
        case KEY_UP:
        case 'k': top_view_move(v, m, -1); break;
        case KEY_DOWN:
        case 'j': top_view_move(v, m, 1); break;
        case KEY_PPAGE: top_view_move(v, m, -(int)(page ? page : 1)); break;
        case KEY_NPAGE: top_view_move(v, m, (int)(page ? page : 1)); break;
        case KEY_HOME: top_view_move(v, m, -(int)m->n_procs); break;
        case KEY_END: top_view_move(v, m, (int)m->n_procs); break;
        case KEY_LEFT:
                if (v->gpu_scroll)
                        v->gpu_scroll--;
                break;
        case KEY_RIGHT: v->gpu_scroll++; break; /* clamped when rendered */
        case 's':
        case KEY_F(6): v->sort = (enum top_sort)((v->sort + 1) % TOP_SORT_COUNT); break;
        case 'm': v->sort = TOP_SORT_MEMORY; break;
        case 'u': v->sort = TOP_SORT_UTIL; break;
        case 'p': v->sort = TOP_SORT_PID; break;
        case 'c': v->sort = TOP_SORT_CPU; break;
        case 'r': v->sort = TOP_SORT_RSS; break;
        case 'e': v->sort = TOP_SORT_TIME; break; /* elapsed: t is the tree's, as in nvitop */
        case 't':
        case KEY_F(5): v->tree = !v->tree; break; /* F5 as in htop */
        case 'K':
        case 'T':
        case 'I': {
                int sig = key == 'K' ? SIGKILL : key == 'T' ? SIGTERM : SIGINT;
                (void)top_signal_ask(v->signals, top_view_selected(v, m), sig, &v->confirm, v->status,
                                     sizeof(v->status));
                break;
        }
        case 'h':
        case '?':
        case KEY_F(1): v->help = true; break;
        default: break;
        }
        return true;
}
