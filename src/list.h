/*
 * list.h - the doubly linked list: a head and a tail, NULL at both ends,
 * the links embedded in the objects (struct pc_link), found back with
 * pc_list_entry (container_of).
 *
 *   struct pc_list         head ──► [link] ⇄ [link] ⇄ [link] ◄── tail
 *                                 prev = NULL         next = NULL
 *
 * Adding and deleting are O(1) and take no allocation; a link not on a
 * list has prev == next == NULL, but so does the only one of a list, so
 * users that need to know keep their own flag (m->on_dirty_list).  No
 * locking here: each list says which lock protects it.
 */
#ifndef PC_LIST_H
#define PC_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct pc_link {
	struct pc_link *prev, *next;
};

struct pc_list {
	struct pc_link *head, *tail;
};

#define pc_list_entry(link, type, member) \
	((type *)(void *)((char *)(link) - offsetof(type, member)))

/* The object after / before @obj on its list, or NULL; @obj not NULL. */
#define pc_list_next_entry(obj, type, member) \
	((obj)->member.next ? pc_list_entry((obj)->member.next, type, member) \
			    : NULL)
#define pc_list_first_entry(l, type, member) \
	((l)->head ? pc_list_entry((l)->head, type, member) : NULL)
#define pc_list_last_entry(l, type, member) \
	((l)->tail ? pc_list_entry((l)->tail, type, member) : NULL)

static inline bool pc_list_empty(const struct pc_list *l)
{
	return l->head == NULL;
}

static inline void pc_list_add_tail(struct pc_list *l, struct pc_link *x)
{
	x->next = NULL;
	x->prev = l->tail;
	if (l->tail)
		l->tail->next = x;
	else
		l->head = x;
	l->tail = x;
}

static inline void pc_list_add_head(struct pc_list *l, struct pc_link *x)
{
	x->prev = NULL;
	x->next = l->head;
	if (l->head)
		l->head->prev = x;
	else
		l->tail = x;
	l->head = x;
}

static inline void pc_list_del(struct pc_list *l, struct pc_link *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		l->head = x->next;
	if (x->next)
		x->next->prev = x->prev;
	else
		l->tail = x->prev;
	x->prev = x->next = NULL;
}

#endif /* PC_LIST_H */
