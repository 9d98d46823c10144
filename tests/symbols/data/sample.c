#include <stdio.h>
#include <stdlib.h>

#define BUFFER_SIZE 256
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A node of the list. */
struct node {
    int value;
    struct node *next;
};

typedef struct {
    double x;
    double y;
} point_t;

typedef struct list {
    struct node *head;
    size_t length;
} list_t;

typedef unsigned long ulong;
typedef int (*compare_fn)(const void *, const void *);

union number {
    int i;
    float f;
};

enum color { RED, GREEN, BLUE };

static int list_length(const list_t *list);

/**
 * Pushes a value to the front of the list.
 */
int list_push(list_t *list, int value) {
    struct node *n = malloc(sizeof *n);
    if (!n) {
        return -1;
    }
    n->value = value;
    n->next = list->head;
    list->head = n;
    list->length++;
    return 0;
}

static int list_length(const list_t *list) {
    return (int)list->length;
}

const char *greeting(void) {
    return "grüß dich";
}

#ifdef DEBUG
void debug_dump(const list_t *list) {
    printf("%d\n", list_length(list));
}
#endif
