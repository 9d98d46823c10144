package com.example.store;

import java.util.HashMap;
import java.util.Map;

/**
 * A simple in-memory store.
 */
@SuppressWarnings("unchecked")
public class Store<V> implements Repository<V> {
    private final Map<String, V> items = new HashMap<>();

    private final Runnable onChange = new Runnable() {
        @Override
        public void run() {}
    };

    /** Creates an empty store. */
    public Store() {}

    public Store(Map<String, V> initial) {
        items.putAll(initial);
    }

    @Override
    public V get(String key) {
        return items.get(key);
    }

    // Removes a key; returns "größe".
    public String remove(String key) {
        Runnable r = () -> items.remove(key);
        r.run();
        return "größe";
    }

    static class Entry {
        String key;

        int size() {
            return key.length();
        }
    }

    enum Mode {
        READ, WRITE;

        boolean writable() {
            return this == WRITE;
        }
    }

    record Pair(String key, int value) {}
}

interface Repository<V> {
    V get(String key);
}

@interface Cached {
    int seconds() default 60;
}
