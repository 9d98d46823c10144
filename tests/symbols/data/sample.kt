package demo

import kotlin.math.max

/** A repository. */
data class User(val id: Int, val name: String)

interface Repo {
    fun find(id: Int): User?
}

class MemoryRepo : Repo {
    private val users = mutableMapOf<Int, User>()

    override fun find(id: Int): User? {
        return users[id]
    }

    fun add(user: User) {
        users[user.id] = user
    }

    companion object {
        fun empty(): MemoryRepo = MemoryRepo()
    }
}

enum class Color { RED, GREEN }

object Registry {
    fun lookup(name: String): Int = name.length
}

fun String.shout(): String = uppercase()

suspend fun main() {
    val repo = MemoryRepo()
    println(repo.find(1))
}
