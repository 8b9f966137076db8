/* Kernel command-line settings of gpuvet tune: parameters written where the boot loader
 * takes them from, effective at the next boot.
 *
 * Where (docs/tune.md): a GRUB drop-in of ours, /etc/default/grub.d/90-gpuvet.cfg, on
 * Debian and Ubuntu (update-grub reads it); on Boot Loader Specification systems (RHEL,
 * Fedora, ...) the "options" line of every /boot/loader/entries/NAME.conf, as grubby edits
 * them, plus the templates new kernels inherit from (/etc/kernel/cmdline, the
 * GRUB_CMDLINE_LINUX of /etc/default/grub); on other GRUB systems /etc/default/grub.
 *
 * A target is one setting in one file, named "FILE#SETTING"
 * ("/etc/default/grub.d/90-gpuvet.cfg#boot.max_cstate"). Its value is the setting's
 * parameters as the file has them, in the setting's key order ("intel_idle.max_cstate=1
 * processor.max_cstate=1"), or "none". Setting a value replaces a parameter the file has in
 * place, appends one it lacks (" key=value" at the end), and removes one not wanted (with
 * the space before it), so a revert gives the file back byte for byte; our drop-in is
 * removed when no parameter is left in it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fsroot;

#define TUNE_CMDLINE_SEP '#'
#define TUNE_GRUB_DROPIN "/etc/default/grub.d/90-gpuvet.cfg"

enum cmdline_file_kind {
        CMDLINE_GRUB_DROPIN, /* ours: GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX ..." */
        CMDLINE_GRUB_DEFAULT, /* /etc/default/grub: GRUB_CMDLINE_LINUX="..." */
        CMDLINE_BLS_ENTRY,   /* options ... */
        CMDLINE_KERNEL,      /* /etc/kernel/cmdline: the first line */
};

enum cmdline_file_kind tune_cmdline_kind(const char *file);

/* The parameters of text (a file of kind) whose key is one of keys (NULL-terminated),
 * first of each key in keys order, space-separated; "none" when there is none. 0, or
 * -ENOENT when text has no command line of that kind (a drop-in: never), -ENOTSUP when it
 * defers to a variable ("options $kernelopts"), -EILSEQ for an unquoted GRUB_CMDLINE_LINUX
 * value, -EINVAL when the line holds a NUL byte,
 * -ENAMETOOLONG when buf is too small. */
int tune_cmdline_get(const char *text, size_t len, enum cmdline_file_kind kind, const char *const *keys, char *buf,
                     size_t size);

/* text with the parameters of keys made exactly those of wanted ("none" or tokens
 * "key=value" whose keys are in keys). *out is malloc'd (NULL with *out_len 0 when the
 * result is a drop-in with nothing left: remove the file). text may be NULL (no file). 0,
 * -ENOENT/-ENOTSUP as for get, -EINVAL for a wanted token of another key, -ENOMEM. */
int tune_cmdline_set(const char *text, size_t len, enum cmdline_file_kind kind, const char *const *keys,
                     const char *wanted, char **out, size_t *out_len);

/* Are all of the parameters of value ("none": none of keys) what the running kernel was
 * booted with (/proc/cmdline under fs)? false when unreadable. */
bool tune_cmdline_in_effect(struct fsroot *fs, const char *const *keys, const char *value);

/* The files this machine's boot loader takes the command line from (NULL-terminated, free
 * with strv_free), or NULL with why filled when there are none gpuvet can edit. */
char **tune_cmdline_files(struct fsroot *fs, char *why, size_t whylen);

/* Read and write a target ("FILE#SETTING") through fs. keys: the setting's. */
int tune_cmdline_read(struct fsroot *fs, const char *file, const char *const *keys, char *buf, size_t size);
int tune_cmdline_write(struct fsroot *fs, const char *file, const char *const *keys, const char *value);

/* After writes to a GRUB file on the live system: regenerate grub.cfg (update-grub, else
 * grub2-mkconfig / grub-mkconfig) under a deadline. 0, or a negative errno with msg saying
 * what failed; under another root nothing runs and msg says what to run there (returns 1). */
int tune_cmdline_regenerate(struct fsroot *fs, char *msg, size_t msglen);
