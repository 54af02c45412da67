/*
 * A per-thread bump allocator behind cJSON's hooks, for the trees of one
 * admission. Ownership rule: everything cJSON allocates between arena_begin
 * and arena_end on a thread lives and dies with that call; allocation is a
 * pointer bump, cJSON's frees of arena memory are nothing, and arena_end
 * forgets it all at once. Outside arena_begin/arena_end (and while paused) the
 * hooks are plain malloc/free, so every other cJSON user is unaffected.
 */
#ifndef DISTENV_ARENA_H
#define DISTENV_ARENA_H

/*
 * Installs the cJSON hooks, once per process. Thread-safe, but call it before
 * other threads use cJSON (main does): cJSON reads its hooks unlocked.
 */
void arena_init(void);

/* Serves this thread's cJSON allocations from its arena until arena_end. */
void arena_begin(void);

/*
 * Ends the arena: everything allocated since arena_begin is forgotten (one
 * block is kept for the thread's next admission; the thread's blocks are
 * freed when it exits).
 */
void arena_end(void);

/*
 * 1 while this thread's cJSON allocations come from its arena: a tree built
 * meanwhile need not be deleted (arena_end forgets it whole).
 */
int arena_active(void);

/*
 * Pauses the arena for allocations that must outlive it (an answer printed by
 * cJSON, a look-up that may cache what it parsed). Returns what to pass to
 * arena_resume.
 */
int arena_pause(void);
void arena_resume(int was);

#endif
